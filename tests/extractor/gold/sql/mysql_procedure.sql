DELIMITER ;;
CREATE PROCEDURE shop.add_order(IN customer INT)
BEGIN
  INSERT INTO shop.orders (customer_id) VALUES (customer);
  UPDATE shop.customers SET order_count = order_count + 1 WHERE id = customer;
END ;;
DELIMITER ;
CALL shop.add_order(7);
