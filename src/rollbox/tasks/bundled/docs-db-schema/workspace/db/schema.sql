-- Base schema of the bookings service (SQLite).
-- Later changes live in db/migrations/ and are applied in file name order.

CREATE TABLE customers (
    id          INTEGER PRIMARY KEY,
    email       TEXT NOT NULL UNIQUE,
    full_name   TEXT NOT NULL,
    phone       TEXT,
    created_at  TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE rooms (
    code               TEXT PRIMARY KEY,
    floor              INTEGER NOT NULL,
    capacity           INTEGER NOT NULL DEFAULT 2,
    nightly_rate_cents INTEGER NOT NULL
);

CREATE TABLE bookings (
    id           INTEGER PRIMARY KEY,
    customer_id  INTEGER NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
    room_code    TEXT NOT NULL REFERENCES rooms(code),
    check_in     TEXT NOT NULL,
    check_out    TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'pending',
    notes        TEXT
);

CREATE TABLE payments (
    booking_id   INTEGER NOT NULL,
    seq          INTEGER NOT NULL,
    amount_cents INTEGER NOT NULL,
    method       TEXT DEFAULT 'card',
    PRIMARY KEY (booking_id, seq),
    FOREIGN KEY (booking_id) REFERENCES bookings(id) ON DELETE RESTRICT
);

CREATE INDEX idx_bookings_customer ON bookings(customer_id);
CREATE UNIQUE INDEX idx_bookings_room_dates ON bookings(room_code, check_in);
