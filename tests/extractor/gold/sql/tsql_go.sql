CREATE TABLE dbo.accounts (id INT PRIMARY KEY, owner NVARCHAR(50))
GO
INSERT INTO dbo.accounts (id, owner) VALUES (1, N'ann');
SELECT owner FROM dbo.accounts;
GO
DROP TABLE dbo.accounts;
