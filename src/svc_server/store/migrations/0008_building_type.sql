-- Building type and land area of each transaction (issue 14). Portable SQL.
--
-- building_type: 'whole_building' (RTMS 일반), 'unit' (RTMS 집합; every officetel) or
-- NULL when the source does not say. land_area_m2: plottageAr of a whole building.
-- Neither enters natural_key, so stored keys stay valid. Rows stored before this
-- migration: officetels become 'unit' (the type follows from the property type); the
-- others stay NULL until their file is loaded again (`svc load` / `svc sync rtms`
-- rewrite the columns of records they find already stored).

ALTER TABLE transactions ADD COLUMN building_type TEXT;
ALTER TABLE transactions ADD COLUMN land_area_m2 DOUBLE PRECISION;
UPDATE transactions SET building_type = 'unit' WHERE property_type = 'officetel';
