-- Every R-ONE value says which series it belongs to (issue 27). Portable SQL (SQLite
-- and PostgreSQL).
--
-- survey_class: the survey class (오피스, 중대형 상가, 소규모 상가, 집합 상가, 일반 상가), as
-- more than one class now gives retail values; era: the era of the table the value came
-- from (linked for a (시계열) series, 2024Q3~, 2022~, ...); source_table: its STATBL_ID;
-- floor: the floor of a floor rent (a rent_level of one floor), '' for all floors.
-- Values loaded before carry the class their property type was read from (the only one
-- read then) and no era or table: '' (not known); a new sync loads them again with their
-- era, and answers prefer those.
ALTER TABLE index_observations ADD COLUMN survey_class TEXT NOT NULL DEFAULT '';
ALTER TABLE index_observations ADD COLUMN era TEXT NOT NULL DEFAULT '';
ALTER TABLE index_observations ADD COLUMN source_table TEXT NOT NULL DEFAULT '';
ALTER TABLE index_observations ADD COLUMN floor TEXT NOT NULL DEFAULT '';
UPDATE index_observations SET survey_class = CASE property_type
    WHEN 'office' THEN '오피스'
    WHEN 'retail' THEN '중대형 상가'
    WHEN 'commercial_complex' THEN '집합 상가'
    ELSE '' END
    WHERE source = 'rone_official' AND synthetic = 0;
