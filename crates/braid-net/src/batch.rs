//! Outgoing datagrams gathered for GSO: consecutive packets for the same
//! socket, destination and source, all of one size (the last may be
//! shorter), leave in one `sendmsg` that the kernel (or the NIC) cuts into
//! datagrams. A bulk sender's full segments on one subflow batch well;
//! anything else goes one datagram per call, as without GSO.

use std::net::{IpAddr, SocketAddr};

use crate::socket::{self, Socket};

/// Bytes one GSO send may carry: the IP length field bounds the
/// super-packet the kernel builds before cutting it.
const MAX_BATCH_BYTES: usize = 64_000;
/// Tries (each after waiting for the socket to drain) before a batch is
/// dropped as lost.
const SEND_TRIES: usize = 20;

/// Where a batch goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Route {
    pub(crate) socket: usize,
    pub(crate) remote: SocketAddr,
    pub(crate) source: Option<IpAddr>,
}

/// Counts of what went out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendStats {
    pub datagrams: u64,
    /// `sendmsg` calls (fewer than datagrams with GSO).
    pub calls: u64,
    /// Datagrams dropped because their socket stayed full.
    pub dropped: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Batch {
    route: Option<Route>,
    buf: Vec<u8>,
    segment: usize,
    count: usize,
    /// A shorter datagram ended the batch.
    closed: bool,
    pub(crate) stats: SendStats,
}

impl Batch {
    /// The buffer to encode the next datagram into (append only).
    pub(crate) fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// The bytes appended to the buffer since `start` are one datagram for
    /// `route`: keeps it in the batch, or sends the batch before it.
    pub(crate) fn push(&mut self, sockets: &[Option<Socket>], start: usize, route: Route) {
        let len = self.buf.len() - start;
        let fits = self.route == Some(route)
            && !self.closed
            && len <= self.segment
            && self.count < max_segments(sockets, route.socket)
            && self.buf.len() <= MAX_BATCH_BYTES;
        if fits {
            self.count += 1;
            self.closed = len < self.segment;
            return;
        }
        if self.count > 0 {
            let datagram = self.buf.split_off(start);
            self.flush(sockets);
            self.buf = datagram;
        }
        (self.route, self.segment, self.count, self.closed) = (Some(route), len, 1, false);
    }

    /// Sends what is batched.
    pub(crate) fn flush(&mut self, sockets: &[Option<Socket>]) {
        let Some(route) = self.route.take() else { return };
        let count = std::mem::take(&mut self.count) as u64;
        if count == 0 {
            self.buf.clear();
            return;
        }
        let Some(socket) = sockets.get(route.socket).and_then(Option::as_ref) else {
            self.stats.dropped += count;
            self.buf.clear();
            return;
        };
        let segment = (count > 1).then_some(self.segment);
        let mut sent = false;
        for _ in 0..SEND_TRIES {
            match socket.send(route.remote, route.source, &self.buf, segment) {
                Ok(()) => {
                    sent = true;
                    break;
                }
                // Only WouldBlock comes back: wait for room.
                Err(_) => socket::wait_writable(socket.fd(), 10),
            }
        }
        if sent {
            self.stats.calls += 1;
            self.stats.datagrams += count;
        } else {
            self.stats.dropped += count;
        }
        self.buf.clear();
    }
}

fn max_segments(sockets: &[Option<Socket>], i: usize) -> usize {
    sockets.get(i).and_then(Option::as_ref).map_or(1, Socket::max_segments)
}
