-- Track where a booking came from.
ALTER TABLE bookings ADD COLUMN source TEXT NOT NULL DEFAULT 'web';
