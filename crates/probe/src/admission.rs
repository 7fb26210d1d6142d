//! Who may hold the server's connections: strangers in the handshake, and clients in a test.
//!
//! A connection that has not yet authenticated holds a handshake slot. Those are bounded per
//! address, per network (`source.rs`) and in all, so one source cannot hold more than its
//! share. When every slot is taken, a newcomer takes the slot of the oldest handshake of the
//! network holding the most: a flood from a few networks then only displaces itself, and a
//! client from anywhere else still gets in and authenticates (a round trip) long before the
//! flood can take its slot back. Only an authenticated client takes one of the `max_clients`
//! test slots, so strangers can never make the server busy for its users.

use std::collections::HashMap;
use std::net::{IpAddr, Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::source::{self, Prefix};

#[derive(Debug, Clone)]
pub struct Bounds {
    /// Handshakes in progress from one address.
    pub per_address: usize,
    /// Handshakes in progress from one /24 or /64.
    pub per_prefix: usize,
    /// Handshakes in progress in all.
    pub handshakes: usize,
    /// Authenticated clients served at once.
    pub clients: usize,
}

/// Why a connection got no handshake slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Crowded {
    #[error("too many connections from this address are logging in")]
    Address,
    #[error("too many connections from this network are logging in")]
    Prefix,
}

struct Handshake {
    peer: SocketAddr,
    address: IpAddr,
    prefix: Prefix,
    /// A second descriptor of the connection, to cut it off when it is displaced.
    socket: TcpStream,
}

#[derive(Default)]
struct Table {
    /// Ids grow with time: the smallest of a network is its oldest handshake.
    next_id: u64,
    handshakes: HashMap<u64, Handshake>,
    per_address: HashMap<IpAddr, usize>,
    per_prefix: HashMap<Prefix, usize>,
}

pub struct Admission {
    bounds: Bounds,
    table: Mutex<Table>,
    clients: AtomicUsize,
}

/// A handshake slot, given back when dropped.
pub struct HandshakeSlot {
    admission: Arc<Admission>,
    id: u64,
}

/// A test slot, given back when dropped.
pub struct ClientSlot {
    admission: Arc<Admission>,
}

/// A slot was granted; `displaced` is the peer whose handshake was cut off to make room.
pub struct Granted {
    pub slot: HandshakeSlot,
    pub displaced: Option<SocketAddr>,
}

impl Admission {
    pub fn new(bounds: Bounds) -> Arc<Admission> {
        Arc::new(Admission {
            bounds,
            table: Mutex::new(Table::default()),
            clients: AtomicUsize::new(0),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        // The table is consistent between statements; a panic elsewhere leaves it usable.
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A handshake slot for the connection `socket` from `peer`, or why not.
    pub fn handshake(
        self: &Arc<Self>,
        peer: SocketAddr,
        socket: TcpStream,
    ) -> Result<Granted, Crowded> {
        let address = source::address(peer.ip());
        let prefix = source::prefix(address);
        let mut table = self.lock();
        if table.per_address.get(&address).copied().unwrap_or(0) >= self.bounds.per_address {
            return Err(Crowded::Address);
        }
        if table.per_prefix.get(&prefix).copied().unwrap_or(0) >= self.bounds.per_prefix {
            return Err(Crowded::Prefix);
        }
        let displaced = if table.handshakes.len() >= self.bounds.handshakes {
            table.displace_one()
        } else {
            None
        };
        let id = table.next_id;
        table.next_id += 1;
        *table.per_address.entry(address).or_default() += 1;
        *table.per_prefix.entry(prefix).or_default() += 1;
        let handshake = Handshake {
            peer,
            address,
            prefix,
            socket,
        };
        table.handshakes.insert(id, handshake);
        let slot = HandshakeSlot {
            admission: Arc::clone(self),
            id,
        };
        Ok(Granted { slot, displaced })
    }

    /// A test slot for an authenticated client, or None when `clients` are being served.
    pub fn client(self: &Arc<Self>) -> Option<ClientSlot> {
        if self.clients.fetch_add(1, Ordering::SeqCst) >= self.bounds.clients {
            self.clients.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(ClientSlot {
            admission: Arc::clone(self),
        })
    }

    /// Handshakes and tests in progress.
    #[cfg(test)]
    fn in_use(&self) -> (usize, usize) {
        let handshakes = self.lock().handshakes.len();
        (handshakes, self.clients.load(Ordering::SeqCst))
    }
}

impl Table {
    /// Cuts off the oldest handshake of the network holding the most; returns its peer.
    fn displace_one(&mut self) -> Option<SocketAddr> {
        let crowded = self
            .per_prefix
            .iter()
            .max_by_key(|(_, count)| **count)
            .map(|(prefix, _)| *prefix)?;
        let (id, _) = self
            .handshakes
            .iter()
            .filter(|(_, h)| h.prefix == crowded)
            .min_by_key(|(id, _)| **id)?;
        let handshake = self.remove(*id)?;
        // Its thread reads end-of-file at once and ends; the slot is free already.
        let _ = handshake.socket.shutdown(Shutdown::Both);
        Some(handshake.peer)
    }

    fn remove(&mut self, id: u64) -> Option<Handshake> {
        let handshake = self.handshakes.remove(&id)?;
        decrement(&mut self.per_address, handshake.address);
        decrement(&mut self.per_prefix, handshake.prefix);
        Some(handshake)
    }
}

/// Counts that reach zero are removed, so the tables hold only sources now connected.
fn decrement<K: std::hash::Hash + Eq>(counts: &mut HashMap<K, usize>, key: K) {
    if let Some(count) = counts.get_mut(&key) {
        *count -= 1;
        if *count == 0 {
            counts.remove(&key);
        }
    }
}

impl Drop for HandshakeSlot {
    fn drop(&mut self) {
        // Already gone if it was displaced.
        self.admission.lock().remove(self.id);
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        self.admission.clients.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;

    /// Connected sockets on loopback: the server's ends.
    fn connections(n: usize) -> (TcpListener, Vec<TcpStream>, Vec<TcpStream>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let to = listener.local_addr().unwrap();
        let clients: Vec<TcpStream> = (0..n).map(|_| TcpStream::connect(to).unwrap()).collect();
        let servers = (0..n).map(|_| listener.accept().unwrap().0).collect();
        (listener, clients, servers)
    }

    fn bounds() -> Bounds {
        Bounds {
            per_address: 2,
            per_prefix: 3,
            handshakes: 4,
            clients: 1,
        }
    }

    fn at(ip: &str) -> SocketAddr {
        SocketAddr::new(ip.parse().unwrap(), 1000)
    }

    #[test]
    fn one_address_and_one_network_get_their_share_only() {
        let admission = Admission::new(bounds());
        let (_l, _c, mut servers) = connections(4);
        let mut take = |ip: &str| admission.handshake(at(ip), servers.pop().unwrap());
        let first = take("10.0.0.1").unwrap();
        let _second = take("10.0.0.1").unwrap();
        assert_eq!(take("10.0.0.1").err(), Some(Crowded::Address));
        let _third = take("10.0.0.2").unwrap();
        let (_l, _c, mut more) = connections(2);
        assert_eq!(
            admission
                .handshake(at("10.0.0.3"), more.pop().unwrap())
                .err(),
            Some(Crowded::Prefix)
        );
        drop(first);
        assert!(admission
            .handshake(at("10.0.0.1"), more.pop().unwrap())
            .is_ok());
    }

    #[test]
    fn a_full_table_displaces_the_oldest_of_the_most_crowded_network() {
        let admission = Admission::new(bounds());
        let (_l, mut clients, servers) = connections(5);
        let mut servers = servers.into_iter();
        let flood: Vec<Granted> = ["10.9.9.1", "10.9.9.1", "10.9.9.2", "10.8.8.1"]
            .iter()
            .map(|ip| {
                admission
                    .handshake(at(ip), servers.next().unwrap())
                    .unwrap()
            })
            .collect();
        assert!(flood.iter().all(|g| g.displaced.is_none()));
        let newcomer = admission
            .handshake(at("10.1.1.1"), servers.next().unwrap())
            .unwrap();
        assert_eq!(newcomer.displaced, Some(at("10.9.9.1")));
        assert_eq!(admission.in_use().0, 4);
        // The displaced connection was cut: its client reads end-of-file.
        clients[0]
            .set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .unwrap();
        assert_eq!(clients[0].read(&mut [0u8; 1]).unwrap(), 0);
        drop(flood);
        assert_eq!(admission.in_use().0, 1);
        drop(newcomer);
        assert_eq!(admission.in_use().0, 0);
        assert!(admission.lock().per_address.is_empty());
    }

    #[test]
    fn test_slots_are_bounded_and_given_back() {
        let admission = Admission::new(bounds());
        let slot = admission.client().unwrap();
        assert!(admission.client().is_none());
        drop(slot);
        assert!(admission.client().is_some());
        assert_eq!(admission.in_use().1, 0);
    }
}
