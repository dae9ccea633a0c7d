\connect analytics
CREATE TABLE staging (id int);
\copy staging FROM 'staging.csv'
SELECT count(*) FROM staging;

DELETE FROM staging;
/
TRUNCATE TABLE staging;
