//! Sockets for unit tests: a connected pair over loopback.

use std::net::{TcpListener, TcpStream};

/// A client and the server's end of one loopback connection.
pub fn connected_pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    (client, listener.accept().unwrap().0)
}
