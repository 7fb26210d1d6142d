//! BBRv3 driven by hand-made ACKs.
