mod backlog;
mod config;
mod delay;
mod error;
mod hist;
mod link;
mod stats;
fn main() {}
