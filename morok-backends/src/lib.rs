//! Morok devices.
