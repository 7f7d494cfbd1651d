-- Reports filter bookings by customer and status together; payments by method.
DROP INDEX idx_bookings_customer;
CREATE INDEX idx_bookings_customer_status ON bookings(customer_id, status);
CREATE INDEX idx_payments_method ON payments(method);
