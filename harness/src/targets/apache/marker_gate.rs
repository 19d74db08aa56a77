//! A gate on the way to one broker of an Apache cluster kconform starts, through which the
//! other brokers reach it: the cluster's inter-broker listener is advertised at the gate's
//! address, so replication, and the WriteTxnMarkers a transaction coordinator sends, pass
//! through it. Closed, it holds back every WriteTxnMarkers request (API 27) sent to its broker,
//! and only those; opened, it lets them through. This is how a scenario holds a transaction's
//! markers on Apache, as kaas-ref's are held in its marker queue
//! (`reference_broker::BrokerHandle::hold_markers`): the transaction stays PrepareCommit (or
//! PrepareAbort) for as long as the scenario wants, with every broker serving.
//!
//! It reads the frames its broker is sent (a size, then a request whose first two bytes are
//! the API key) and copies the answers back as bytes. A frame over Apache's own request limit
//! ends the connection, as the broker would.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// WriteTxnMarkers' API key: the only requests a closed gate holds.
const WRITE_TXN_MARKERS: i16 = 27;

/// The largest request a broker reads (Apache's `socket.request.max.bytes`, 100 MiB).
const MAX_FRAME: usize = 100 * 1024 * 1024;

/// How often a held request looks again at whether the gate opened or the cluster went.
const RECHECK: Duration = Duration::from_millis(100);

/// What the gate's threads share: whether it is closed, and whether it is shutting down.
#[derive(Debug, Default)]
struct Shared {
    closed: Mutex<bool>,
    changed: Condvar,
    stopping: AtomicBool,
}

impl Shared {
    /// Returns once the gate is open, or it is shutting down (`false`).
    fn wait_open(&self) -> bool {
        let mut closed = self.closed.lock().unwrap_or_else(|e| e.into_inner());
        while *closed {
            if self.stopping.load(Ordering::SeqCst) {
                return false;
            }
            closed = self
                .changed
                .wait_timeout(closed, RECHECK)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        !self.stopping.load(Ordering::SeqCst)
    }
}

/// One broker's gate: listening at the address the cluster advertises for the broker's
/// inter-broker listener, forwarding to where that listener really is. Stops accepting when
/// dropped; the connections it carries end with their broker.
#[derive(Debug)]
pub struct MarkerGate {
    shared: Arc<Shared>,
    addr: SocketAddr,
}

impl MarkerGate {
    /// Listens on a free loopback port, forwarding each connection to `upstream`.
    pub fn open(upstream: SocketAddr) -> io::Result<MarkerGate> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let accepting = shared.clone();
        std::thread::Builder::new()
            .name(format!("marker-gate-{}", addr.port()))
            .spawn(move || accept(listener, upstream, accepting))?;
        Ok(MarkerGate { shared, addr })
    }

    /// Where the gate listens: the address to advertise.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Closes (`true`) or opens the gate; `false` when it was so already.
    pub fn hold(&self, held: bool) -> bool {
        let mut closed = self.shared.closed.lock().unwrap_or_else(|e| e.into_inner());
        let changed = std::mem::replace(&mut *closed, held) != held;
        self.shared.changed.notify_all();
        changed
    }
}

impl Drop for MarkerGate {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        self.shared.changed.notify_all();
        // Wakes the accept loop, which then sees it is stopping.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

fn accept(listener: TcpListener, upstream: SocketAddr, shared: Arc<Shared>) {
    for incoming in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(peer) = incoming else { continue };
        let shared = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("marker-gate-conn".into())
            .spawn(move || {
                if let Err(e) = carry(peer, upstream, &shared) {
                    tracing::debug!(%upstream, error = %e, "marker gate connection ended");
                }
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "marker gate could not carry a connection");
        }
    }
}

/// Carries one connection: requests frame by frame towards the broker (a WriteTxnMarkers
/// waiting while the gate is closed), answers back as they come.
fn carry(peer: TcpStream, upstream: SocketAddr, shared: &Shared) -> io::Result<()> {
    let broker = TcpStream::connect_timeout(&upstream, Duration::from_secs(5))?;
    // As Kafka's own sockets: a reply copied in pieces must not wait on the peer's ACKs.
    peer.set_nodelay(true)?;
    broker.set_nodelay(true)?;
    let (mut answers_in, mut answers_out) = (broker.try_clone()?, peer.try_clone()?);
    let back = std::thread::Builder::new()
        .name("marker-gate-back".into())
        .spawn(move || {
            let _ = io::copy(&mut answers_in, &mut answers_out);
            let _ = answers_out.shutdown(Shutdown::Both);
            let _ = answers_in.shutdown(Shutdown::Both);
        })?;
    let forwarded = forward(&peer, &broker, shared);
    let _ = broker.shutdown(Shutdown::Both);
    let _ = peer.shutdown(Shutdown::Both);
    let _ = back.join();
    forwarded
}

/// Copies requests from `peer` to `broker` until either side ends.
fn forward(mut peer: &TcpStream, mut broker: &TcpStream, shared: &Shared) -> io::Result<()> {
    loop {
        let Some(frame) = read_frame(&mut peer)? else {
            return Ok(());
        };
        if api_key(&frame) == Some(WRITE_TXN_MARKERS) && !shared.wait_open() {
            return Ok(());
        }
        broker.write_all(&frame)?;
    }
}

/// The next frame (its size prefix included); `None` at a clean end between frames.
fn read_frame(from: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut size = [0u8; 4];
    match from.read_exact(&mut size) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = i32::from_be_bytes(size);
    let len = usize::try_from(len)
        .ok()
        .filter(|l| *l <= MAX_FRAME)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a request frame of {len} bytes"),
            )
        })?;
    let mut frame = Vec::with_capacity(4 + len);
    frame.extend_from_slice(&size);
    frame.resize(4 + len, 0);
    from.read_exact(&mut frame[4..])?;
    Ok(Some(frame))
}

/// The API key of a framed request, when it has one.
fn api_key(frame: &[u8]) -> Option<i16> {
    frame.get(4..6).map(|k| i16::from_be_bytes([k[0], k[1]]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn framed(api: i16, body: &[u8]) -> Vec<u8> {
        let mut f = ((2 + body.len()) as i32).to_be_bytes().to_vec();
        f.extend(api.to_be_bytes());
        f.extend(body);
        f
    }

    /// An upstream that echoes every frame it is sent.
    fn echo() -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let mut conn = conn.unwrap();
                std::thread::spawn(move || {
                    while let Ok(Some(f)) = read_frame(&mut conn) {
                        conn.write_all(&f).unwrap();
                    }
                });
            }
        });
        addr
    }

    fn answer(s: &mut TcpStream) -> Vec<u8> {
        read_frame(s).unwrap().unwrap()
    }

    #[test]
    fn a_closed_gate_holds_markers_and_only_markers_until_opened() {
        let gate = MarkerGate::open(echo()).unwrap();
        let mut markers = TcpStream::connect(gate.addr()).unwrap();
        let mut fetches = TcpStream::connect(gate.addr()).unwrap();
        markers
            .set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        // Open: a marker request goes through.
        markers.write_all(&framed(27, b"one")).unwrap();
        assert_eq!(answer(&mut markers), framed(27, b"one"));
        assert!(gate.hold(true) && !gate.hold(true));
        markers.write_all(&framed(27, b"two")).unwrap();
        fetches.write_all(&framed(1, b"fetch")).unwrap();
        assert_eq!(answer(&mut fetches), framed(1, b"fetch"), "a Fetch passes");
        let held = read_frame(&mut markers).unwrap_err();
        assert!(
            matches!(
                held.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ),
            "{held}"
        );
        let opened = Instant::now();
        assert!(gate.hold(false));
        markers
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        assert_eq!(answer(&mut markers), framed(27, b"two"));
        assert!(opened.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn a_frame_over_the_limit_ends_the_connection() {
        let gate = MarkerGate::open(echo()).unwrap();
        let mut s = TcpStream::connect(gate.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(&(MAX_FRAME as i32 + 1).to_be_bytes()).unwrap();
        let mut rest = Vec::new();
        let read = s.read_to_end(&mut rest);
        assert!(
            matches!(read, Ok(0)) || read.is_err(),
            "closed, nothing answered: {read:?} {rest:?}"
        );
        s = TcpStream::connect(gate.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(&(-1i32).to_be_bytes()).unwrap();
        assert!(matches!(s.read_to_end(&mut rest), Ok(0) | Err(_)));
        assert!(rest.is_empty());
    }
}
