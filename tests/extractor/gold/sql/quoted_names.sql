CREATE TABLE shop.`order.items` (`line.no` INT, sku VARCHAR(20));
SELECT `line.no` FROM shop.`order.items`;
INSERT INTO `shop`.`order.items` (`line.no`, sku) VALUES (1, 'a');
