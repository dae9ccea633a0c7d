CREATE TABLE inventory (sku text, qty int);
FROBNICATE inventory WITH extreme prejudice;
SELECT sku FROM inventory WHERE qty > 0;
INSERT INTO inventory VALUES ('x', 'unterminated);
SELECT 1;
