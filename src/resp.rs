//! Reading RESP replies off a connection: what the plain and the TLS connection share.

use redis::{RedisResult, Value};

/// Reads a pipeline's `offset + count` replies with `receive`, and keeps those from `offset` on:
/// a server's error reply stays in its place beside the others (as the crate's own connection
/// keeps it), and one to a command before `offset` (an `ASKING`) is the call's error once all
/// are read. A failed read ends it at once: the stream is unreadable from
/// there, and the crate's own loop, which reads on, waits the whole read timeout once more for
/// every reply left (a frozen server would hold a pipeline of n commands n times as long).
pub(crate) fn read_replies(
    offset: usize,
    count: usize,
    mut receive: impl FnMut() -> RedisResult<Value>,
) -> RedisResult<Vec<Value>> {
    let mut replies = Vec::with_capacity(count);
    let mut first_error = None;
    let mut read = 0;
    while read < offset + count {
        match receive()? {
            // RESP3 may put push data between replies: not a reply.
            Value::Push { .. } => continue,
            value if read >= offset => replies.push(value),
            value => {
                if let Err(e) = value.extract_error() {
                    first_error.get_or_insert(e);
                }
            }
        }
        read += 1;
    }
    first_error.map_or(Ok(replies), Err)
}
