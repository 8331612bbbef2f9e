-- Values read wrongly from R-ONE floor tables (issue 43). Portable SQL (SQLite and
-- PostgreSQL).
--
-- In `임대동향 층별임대료 및 층별효용비율(...)` tables the market area is the group
-- (GRP_*) and the floor the class (CLS_NM); svc read the class as the market area (an
-- "area" named 1층, 지하1층, ...) and the utility ratio (효용비율) as a rent (floor
-- '효용비율'). Those values are deleted: the next `svc sync rone` loads the tables again,
-- each value under its market area and floor, the utility ratio as floor_utility_ratio.
DELETE FROM index_observations
    WHERE source = 'rone_official'
    AND (
        floor = '효용비율'
        OR source_table IN (SELECT table_id FROM sync_tables WHERE table_name LIKE '%층별%')
        OR (sigungu_code LIKE 'A%'
            AND sigungu IN ('지하1층', '1층', '2층', '3층', '4층', '5층', '6층이상'))
    );
