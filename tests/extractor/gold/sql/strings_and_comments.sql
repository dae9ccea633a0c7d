/*
 * Seed data; loaded once.
 */
INSERT INTO users (id, bio) VALUES (1, 'likes ; semicolons'); -- first user
INSERT INTO users (id, bio) VALUES (2, 'says "hi; there"'); INSERT INTO audit (note) VALUES ('two; on one line');
-- a comment with a ; inside
UPDATE users SET bio = '--not a comment' WHERE id = 1;

SELECT id FROM users WHERE bio LIKE '%;%' /* a ; here too */ ;
