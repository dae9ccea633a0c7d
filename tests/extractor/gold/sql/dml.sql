WITH recent AS (
    SELECT customer_id FROM sales.orders WHERE placed_at > now() - INTERVAL '7 days'
)
UPDATE sales.customers SET active = true
WHERE id IN (SELECT customer_id FROM recent);
DELETE FROM sales.carts WHERE updated_at < '2020-01-01';
MERGE INTO sales.totals t USING sales.orders o ON t.id = o.customer_id
WHEN MATCHED THEN UPDATE SET amount = t.amount + o.amount;
DROP VIEW IF EXISTS sales.old_report;
TRUNCATE sales.staging;
