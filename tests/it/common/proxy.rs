//! A TCP proxy in front of a server, that can hold back what clients send: the bytes of a
//! command that left the client but has not reached Redis yet, as on a slow or congested path.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// How the server's answers pass back to the clients.
#[derive(Clone, Copy)]
enum Pace {
    Whole,
    /// A byte at a time, this far apart.
    Trickle(Duration),
    /// Each chunk held this long first.
    Delay(Duration),
}

/// What one proxied connection sends towards the server.
struct Upstream {
    stream: TcpStream,
    /// While held, what the client sends is kept here instead of forwarded.
    held: Option<Vec<u8>>,
    /// While muted, what the server answers is dropped: the replies are lost on the way back.
    muted: bool,
}

pub struct Proxy {
    pub port: u16,
    conns: Arc<Mutex<Vec<Arc<Mutex<Upstream>>>>>,
    /// While set, a new connection is closed at once, as by a host cut off from the server.
    refusing: Arc<AtomicBool>,
    pace: Arc<Mutex<Pace>>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards each connection to `127.0.0.1:upstream`.
    pub fn start(upstream: u16) -> Proxy {
        Proxy::start_full(upstream, false)
    }

    /// The same, but each connection's bytes after its first write are held back: a server
    /// that answers a client's first request (its connection setup), then freezes.
    pub fn start_answering_once(upstream: u16) -> Proxy {
        Proxy::start_full(upstream, true)
    }

    fn start_full(upstream: u16, answer_once: bool) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let conns: Arc<Mutex<Vec<Arc<Mutex<Upstream>>>>> = Arc::default();
        let all = conns.clone();
        let refusing = Arc::new(AtomicBool::new(false));
        let refuse = refusing.clone();
        let pace = Arc::new(Mutex::new(Pace::Whole));
        let paces = pace.clone();
        thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                if refuse.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                    continue;
                };
                let up = Arc::new(Mutex::new(Upstream {
                    stream: server.try_clone().unwrap(),
                    held: None,
                    muted: false,
                }));
                all.lock().unwrap().push(up.clone());
                let (mut from_server, mut to_client) = (server, client.try_clone().unwrap());
                let replies = up.clone();
                let pace = paces.clone();
                thread::spawn(move || {
                    let mut buf = [0u8; 16 * 1024];
                    loop {
                        let n = match from_server.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        if replies.lock().unwrap().muted {
                            continue;
                        }
                        let pace = *pace.lock().unwrap();
                        if !forward(&mut to_client, &buf[..n], pace) {
                            break;
                        }
                    }
                    let _ = to_client.shutdown(Shutdown::Both);
                });
                let mut from_client = client;
                let all = all.clone();
                thread::spawn(move || {
                    let mut buf = [0u8; 16 * 1024];
                    loop {
                        let n = match from_client.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        let mut up = up.lock().unwrap();
                        match up.held.as_mut() {
                            Some(held) => held.extend_from_slice(&buf[..n]),
                            None => {
                                if up.stream.write_all(&buf[..n]).is_err() {
                                    break;
                                }
                                if answer_once {
                                    up.held = Some(Vec::new());
                                }
                            }
                        }
                    }
                    // The client is gone. With nothing held the server side closes too; else
                    // it stays open until the proxy is dropped, so that what was held still
                    // reaches the server (as a dropped socket's bytes already on their way
                    // would).
                    let closed = {
                        let up = up.lock().unwrap();
                        up.held.is_none() && up.stream.shutdown(Shutdown::Both).is_ok()
                    };
                    if closed {
                        all.lock().unwrap().retain(|other| !Arc::ptr_eq(other, &up));
                    }
                });
            }
        });
        Proxy {
            port,
            conns,
            refusing,
            pace,
        }
    }

    /// From now on, the server's answers reach the clients a byte every `every`.
    pub fn trickle_replies(&self, every: Duration) {
        *self.pace.lock().unwrap() = Pace::Trickle(every);
    }

    /// From now on, the server's answers reach the clients `by` late.
    pub fn delay_replies(&self, by: Duration) {
        *self.pace.lock().unwrap() = Pace::Delay(by);
    }

    /// Cuts the path: what the open connections send is held back (and never reaches the
    /// server unless [`Proxy::let_through`]), and new connections are closed at once.
    pub fn cut(&self) {
        self.refusing.store(true, Ordering::SeqCst);
        self.hold_open_connections();
    }

    pub fn uri(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// From now on, holds back what the connections open now send; later ones pass.
    pub fn hold_open_connections(&self) {
        for up in self.conns.lock().unwrap().iter() {
            up.lock().unwrap().held.get_or_insert_with(Vec::new);
        }
    }

    /// From now on, drops what the server answers on the connections open now; later ones pass.
    pub fn mute_open_connections(&self) {
        for up in self.conns.lock().unwrap().iter() {
            up.lock().unwrap().muted = true;
        }
    }

    /// How many bytes are held back.
    pub fn held_bytes(&self) -> usize {
        self.conns
            .lock()
            .unwrap()
            .iter()
            .map(|up| up.lock().unwrap().held.as_ref().map_or(0, Vec::len))
            .sum()
    }

    /// Forwards what was held back, and lets everything pass again.
    pub fn let_through(&self) {
        self.refusing.store(false, Ordering::SeqCst);
        for up in self.conns.lock().unwrap().iter() {
            let mut up = up.lock().unwrap();
            if let Some(held) = up.held.take() {
                let _ = up.stream.write_all(&held);
            }
        }
    }
}

/// Writes `bytes` to `client` at `pace`; false once the client is gone.
fn forward(client: &mut TcpStream, bytes: &[u8], pace: Pace) -> bool {
    match pace {
        Pace::Whole => client.write_all(bytes).is_ok(),
        Pace::Delay(by) => {
            thread::sleep(by);
            client.write_all(bytes).is_ok()
        }
        Pace::Trickle(every) => bytes.iter().all(|byte| {
            thread::sleep(every);
            client.write_all(&[*byte]).is_ok()
        }),
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        for up in self.conns.lock().unwrap().iter() {
            let _ = up.lock().unwrap().stream.shutdown(Shutdown::Both);
        }
    }
}
