//! Encoder (being written).
