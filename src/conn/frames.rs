//! Where one RESP reply ends in what was read so far: so that the shared connection's reader
//! hands out every reply that one read brought in, without a read for each.

/// The length of the first whole reply in `bytes`; `Ok(None)` when it is not all there yet.
pub(super) fn frame_len(bytes: &[u8]) -> Result<Option<usize>, &'static str> {
    let mut at = 0;
    // Values still to read: an array's elements add to it.
    let mut pending: u64 = 1;
    while pending > 0 {
        let Some(line) = find_crlf(&bytes[at..]) else {
            return Ok(None);
        };
        let head = bytes[at];
        let body = &bytes[at + 1..at + line];
        at += line + 2;
        pending -= 1;
        match head {
            // Simple strings, errors, integers, RESP3's null, double, boolean and big number.
            b'+' | b'-' | b':' | b'_' | b',' | b'#' | b'(' => {}
            // Bulk strings, RESP3's bulk errors and verbatim strings.
            b'$' | b'!' | b'=' => {
                let len = number(body)?;
                if len >= 0 {
                    at += len as usize + 2;
                    if at > bytes.len() {
                        return Ok(None);
                    }
                }
            }
            // Arrays, RESP3's sets and pushes: their elements follow.
            b'*' | b'~' | b'>' => pending += number(body)?.max(0) as u64,
            // RESP3's maps and attributes: a key and a value per entry (an attribute's value
            // follows it, counted once more).
            b'%' => pending += 2 * number(body)?.max(0) as u64,
            b'|' => pending += 2 * number(body)?.max(0) as u64 + 1,
            _ => return Err("not a RESP reply"),
        }
    }
    Ok(Some(at))
}

fn find_crlf(bytes: &[u8]) -> Option<usize> {
    bytes.windows(2).position(|w| w == b"\r\n")
}

fn number(body: &[u8]) -> Result<i64, &'static str> {
    std::str::from_utf8(body)
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|n: &i64| *n >= -1 && *n < 1 << 32)
        .ok_or("a bad length in a RESP reply")
}

#[cfg(test)]
mod tests {
    use super::frame_len;

    #[test]
    fn whole_replies_are_measured_and_cut_ones_wait() {
        let replies: [&[u8]; 7] = [
            b"+OK\r\n",
            b":1733450000000000\r\n",
            b"$-1\r\n",
            b"$5\r\nab\r\nc\r\n",
            b"*2\r\n$3\r\nfoo\r\n*1\r\n:7\r\n",
            b"*-1\r\n",
            b"-NOSCRIPT No matching script\r\n",
        ];
        for reply in replies {
            assert_eq!(frame_len(reply), Ok(Some(reply.len())), "{reply:?}");
            let mut two = reply.to_vec();
            two.extend_from_slice(b"+OK\r\n");
            assert_eq!(frame_len(&two), Ok(Some(reply.len())), "{reply:?}");
            for cut in 0..reply.len() {
                assert_eq!(frame_len(&reply[..cut]), Ok(None), "{reply:?} cut at {cut}");
            }
            // Each agrees with the crate's own parser.
            assert!(redis::parse_redis_value(reply).is_ok(), "{reply:?}");
        }
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(frame_len(b"hello\r\n").is_err());
        assert!(frame_len(b"$x\r\n").is_err());
        assert!(frame_len(b"*99999999999\r\n").is_err());
    }
}
