-- one
SELECT a FROM t1;

SELECT b
FROM t2; -- two
