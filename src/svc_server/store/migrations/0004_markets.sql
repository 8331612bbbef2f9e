-- Marketplace: the published answers, materialized at write time.
-- Portable SQL: runs unchanged on SQLite (>= 3.35) and PostgreSQL (>= 13).
--
-- The k-anonymity rules look across every region and month of a category, so computing
-- an answer per request would be slow. Every load that changes listings or activity
-- rebuilds the rows of the categories it touched, and the dimensions, in its own
-- transaction: readers see the old answers or the new ones, never a mix.

-- One row per published cohort: (region, category, period, product_type), product_type
-- 'all' for the combined cohort. Price columns are NULL when withheld for privacy.
CREATE TABLE market_rows (
    region TEXT NOT NULL,
    category TEXT NOT NULL,
    period TEXT NOT NULL,
    product_type TEXT NOT NULL,
    avg_price DOUBLE PRECISION,
    median_price DOUBLE PRECISION,
    min_price DOUBLE PRECISION,
    max_price DOUBLE PRECISION,
    price_p25 DOUBLE PRECISION,
    price_p75 DOUBLE PRECISION,
    sample_size BIGINT NOT NULL,
    total_views BIGINT NOT NULL,
    total_bookings BIGINT NOT NULL,
    demand_index DOUBLE PRECISION,
    booking_conv_rate DOUBLE PRECISION,
    occupancy_proxy DOUBLE PRECISION,
    confidence TEXT NOT NULL,
    PRIMARY KEY (region, category, period, product_type)
);
CREATE INDEX market_rows_category ON market_rows (category);

-- The dimensions of the published rows: dimension 'region', 'category' or 'period',
-- values in answer order (position), sample_count = published combinations.
CREATE TABLE market_dimensions (
    dimension TEXT NOT NULL,
    position BIGINT NOT NULL,
    value TEXT NOT NULL,
    sample_count BIGINT NOT NULL,
    PRIMARY KEY (dimension, position)
);

-- Listings by category: the rebuild reads every listing-month of the touched categories.
CREATE INDEX market_listings_category ON market_listings (category);
