-- Analytics schema for the events pipeline.
CREATE DATABASE IF NOT EXISTS analytics;

CREATE TABLE analytics.events
(
    id UInt64,
    name String,
    ts DateTime
)
ENGINE = MergeTree
ORDER BY (ts, id); -- sorted by time

/* Daily counts, kept by a materialized view. */
CREATE MATERIALIZED VIEW analytics.daily_mv TO analytics.daily AS
SELECT toDate(ts) AS day, count() AS events
FROM analytics.events
GROUP BY day;

INSERT INTO analytics.events (id, name, ts) VALUES (1, 'signup; step 1', now());

SELECT name, count() FROM analytics.events GROUP BY name;
-- end of schema
