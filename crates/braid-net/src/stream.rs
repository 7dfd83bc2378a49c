//! A blocking client connection: `std::io::Write` to send, `std::io::Read`
//! to receive, each call driving the [`Node`] underneath until it can make
//! progress.
//!
//! Why blocking: the core is sans-IO and the node runs on the caller's
//! thread, so a blocking stream needs no runtime and no locks, and costs
//! nothing per byte beyond the protocol's own work; a program that wants
//! async can drive a [`Node`] from its own reactor (the node's sockets are
//! non-blocking and `drive` takes a timeout).

use std::io::{self, Read, Write};
use std::net::SocketAddr;

use braid_proto::endpoint::ConnectionHandle;
use braid_proto::path_manager::PathPolicy;
use braid_proto::{Connection, Event};

use crate::node::{NetEvent, Node};
use crate::{LocalAddr, NetConfig};

pub struct Stream {
    node: Node,
    handle: ConnectionHandle,
    closed: bool,
    finished: bool,
}

impl Stream {
    /// Opens a connection to `remote` over `locals` (see [`Node::connect`])
    /// and waits until its first subflow is established, or the
    /// connection's failure timeout passes.
    pub fn connect(
        remote: SocketAddr,
        locals: &[(LocalAddr, bool)],
        policy: PathPolicy,
        config: NetConfig,
    ) -> io::Result<Stream> {
        let mut node = Node::new(config);
        let handle = node.connect(remote, locals, policy)?;
        let mut s = Stream { node, handle, closed: false, finished: false };
        s.drive_until(|s| Ok(s.conn()?.subflow_stats(0).is_some_and(|x| x.established)))?;
        Ok(s)
    }

    pub fn node(&mut self) -> &mut Node {
        &mut self.node
    }

    pub fn handle(&self) -> ConnectionHandle {
        self.handle
    }

    /// The connection (statistics, subflows).
    pub fn conn(&mut self) -> io::Result<&mut Connection> {
        self.node.connection(self.handle).ok_or_else(|| io::Error::other("the connection is gone"))
    }

    /// Drives the node until `done` holds; fails with the connection's error.
    fn drive_until(&mut self, mut done: impl FnMut(&mut Self) -> io::Result<bool>) -> io::Result<()> {
        loop {
            if let Some(e) = self.conn()?.error() {
                return Err(io::Error::new(io::ErrorKind::ConnectionAborted, e.to_string()));
            }
            if done(self)? {
                return Ok(());
            }
            self.node.drive(None)?;
            while let Some((h, e)) = self.node.poll_event() {
                if h == self.handle && e == NetEvent::Protocol(Event::Closed) {
                    self.finished = true;
                }
            }
        }
    }

    /// Closes the sending direction and waits until the peer has
    /// acknowledged every byte written.
    pub fn finish(&mut self) -> io::Result<()> {
        if !self.closed {
            self.conn()?.close();
            self.closed = true;
        }
        self.drive_until(|s| Ok(s.finished))
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.closed {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, "the stream was finished"));
        }
        let mut n = 0;
        // Once it filled the send buffer, a write waits, as a blocking write
        // on a Linux socket does, until a third of the buffer is free
        // (`Connection::may_write`), not for the first free byte.
        self.drive_until(|s| {
            let conn = s.conn()?;
            n = if conn.may_write() { conn.write(buf) } else { 0 };
            Ok(n > 0)
        })?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.drive_until(|s| {
            let st = s.conn()?.stats();
            Ok(st.bytes_acked >= st.bytes_written)
        })
    }
}

impl Read for Stream {
    /// Reads what has arrived in order; `Ok(0)` once the peer closed its
    /// direction and everything before its end was read.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let mut n = 0;
        self.drive_until(|s| {
            let c = s.conn()?;
            n = c.read(buf);
            Ok(n > 0 || c.peer_closed())
        })?;
        Ok(n)
    }
}
