//! [`Gunzip`] on cut and damaged streams, against an independent inflater (miniz_oxide, which
//! the share links use): it never hands out fewer bytes of the original, and hands out the
//! same bytes and the same verdict however the input and the reads are cut, pulled or pushed.

use super::{classify, Failure, Gunzip, Inflater, Pulled};
use std::io::{BufReader, Read, Write};

/// About 300 KB of trace-like JSON, varied enough that it takes many deflate blocks.
fn original() -> Vec<u8> {
    let mut s = String::from("{\"traceEvents\":[\n");
    for i in 0..2500u64 {
        let h = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
        s += &format!(
            "{{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k{}_{h:x}\",\"ts\":{},\"dur\":{},\"args\":{{\"correlation\":{i},\"stream\":{}}}}},\n",
            h % 97,
            1000 + i * 13 + h % 7,
            1 + h % 50,
            7 + h % 3
        );
    }
    s += "{\"ph\":\"i\",\"name\":\"end\",\"ts\":1}]}";
    s.into_bytes()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// What a reader yields before its error, and the error's verdict.
fn drain(r: &mut impl Read, read: usize) -> (Vec<u8>, Option<Failure>) {
    let (mut out, mut buf) = (Vec::new(), vec![0; read]);
    loop {
        match r.read(&mut buf) {
            Ok(0) => return (out, None),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) => return (out, Some(classify(&e))),
        }
    }
}

/// Pushed in pieces of `piece` bytes, as the page's worker does.
fn pushed(gz: &[u8], piece: usize) -> (Vec<u8>, Option<Failure>) {
    let (mut inf, mut out, mut pieces) = (Inflater::new(), Vec::new(), gz.chunks(piece));
    loop {
        match inf.pull() {
            Ok(Pulled::Bytes(b)) => out.extend_from_slice(b),
            Ok(Pulled::NeedInput) => match pieces.next() {
                Some(p) => inf.push(p.to_vec()),
                None => inf.end(None),
            },
            Ok(Pulled::End) => return (out, None),
            Err(e) => return (out, Some(classify(&e))),
        }
    }
}

/// The same outcome through every way of cutting the input and the reads; returns it.
fn outcome(gz: &[u8]) -> (Vec<u8>, Option<Failure>) {
    let want = drain(&mut Gunzip::new(gz), 1 << 16);
    for (piece, read) in [(1, 1), (7, 3), (4096, 1000), (1 << 16, 1 << 20)] {
        let got = drain(&mut Gunzip::new(BufReader::with_capacity(piece, gz)), read);
        assert!(
            got == want,
            "pieces of {piece}, reads of {read}: {} bytes {:?}, want {} {:?}",
            got.0.len(),
            got.1,
            want.0.len(),
            want.1
        );
    }
    for piece in [1, 5, 4096, 1 << 20] {
        let got = pushed(gz, piece);
        assert!(
            got == want,
            "pushed in pieces of {piece}: {} bytes {:?}, want {} {:?}",
            got.0.len(),
            got.1,
            want.0.len(),
            want.1
        );
    }
    want
}

/// How many leading bytes of `got` are the original's.
fn good(got: &[u8], original: &[u8]) -> usize {
    got.iter().zip(original).take_while(|(a, b)| a == b).count()
}

/// miniz_oxide's inflate of the member's deflate data (after the 10-byte header flate2's
/// encoder writes): everything it produced, whether it then failed or not. Told that more
/// input may follow, as a stream is read: at the end of input it would otherwise decode
/// zero bits past the cut.
fn reference(deflate: &[u8]) -> Vec<u8> {
    use miniz_oxide::inflate::stream::{inflate, InflateState};
    let mut state = InflateState::new_boxed(miniz_oxide::DataFormat::Raw);
    let mut out = vec![0; 1 << 20];
    let r = inflate(&mut state, deflate, &mut out, miniz_oxide::MZFlush::None);
    out.truncate(r.bytes_written);
    out
}

#[test]
fn a_whole_stream_reads_whole() {
    let text = original();
    let gz = gzip(&text);
    assert!(gz.len() > 20_000, "{} bytes compressed: too few deflate blocks to cut", gz.len());
    assert_eq!(outcome(&gz), (text, None));
}

#[test]
fn a_cut_stream_yields_at_least_what_miniz_oxide_does_then_truncated() {
    let text = original();
    let gz = gzip(&text);
    let (mut total_ours, mut total_ref) = (0, 0);
    for cut in (11..gz.len()).step_by(gz.len() / 37).chain([gz.len() - 9, gz.len() - 3, gz.len() - 1]) {
        let (ours, failure) = outcome(&gz[..cut]);
        assert_eq!(failure, Some(Failure::Truncated), "cut at {cut}");
        assert!(text.starts_with(&ours), "cut at {cut}: not a prefix of the original");
        let want = good(&reference(&gz[10..cut.min(gz.len() - 8)]), &text);
        assert!(ours.len() >= want, "cut at {cut}: {} bytes, miniz_oxide {want}", ours.len());
        (total_ours, total_ref) = (total_ours + ours.len(), total_ref + want);
    }
    assert!(total_ours > 0 && total_ref > 0);
}

#[test]
fn a_damaged_stream_yields_at_least_as_much_of_the_original_then_fails() {
    let text = original();
    let gz = gzip(&text);
    for at in (10..gz.len() - 8).step_by(gz.len() / 41) {
        for flip in [0x55, 0x01, 0xff] {
            let mut bad = gz.clone();
            bad[at] ^= flip;
            let (ours, failure) = outcome(&bad);
            assert!(failure.is_some(), "byte {at} ^ {flip:#x} read as sound");
            let want = reference(&bad[10..bad.len() - 8]);
            let (ours, want) = (good(&ours, &text), good(&want, &text));
            assert!(ours >= want, "byte {at} ^ {flip:#x}: {ours} bytes of the original, miniz_oxide {want}");
        }
    }
}

/// A header with every optional field (RFC 1952: FEXTRA, FNAME, FCOMMENT, FHCRC).
fn member_with_every_field(text: &[u8], header_crc_ok: bool) -> Vec<u8> {
    let plain = gzip(text);
    let mut h = vec![0x1f, 0x8b, 8, 0b1_1110, 0, 0, 0, 0, 0, 3];
    h.extend_from_slice(&[4, 0, b'a', b'b', 2, 0]);
    h.extend_from_slice(b"trace.json\0a comment\0");
    let mut crc = flate2::Crc::new();
    crc.update(&h);
    let hcrc = crc.sum() as u16 ^ if header_crc_ok { 0 } else { 1 };
    h.extend_from_slice(&hcrc.to_le_bytes());
    h.extend_from_slice(&plain[10..]);
    h
}

#[test]
fn members_headers_and_what_follows_them() {
    let (a, b) = (b"{\"traceEvents\":[".as_slice(), b"{\"ph\":\"i\",\"ts\":1}]}".as_slice());
    let two = [gzip(a), member_with_every_field(b, true)].concat();
    assert_eq!(outcome(&two), ([a, b].concat(), None));
    // flate2's own decoder agrees on the framing.
    let mut theirs = Vec::new();
    flate2::read::MultiGzDecoder::new(&two[..]).read_to_end(&mut theirs).unwrap();
    assert_eq!(theirs, [a, b].concat());

    let bad_hcrc = [gzip(a), member_with_every_field(b, false)].concat();
    assert_eq!(outcome(&bad_hcrc), (a.to_vec(), Some(Failure::Corrupt)));
    for (tail, failure) in [
        (&b"garbage"[..], Failure::Corrupt),
        (&[0x1f][..], Failure::Truncated),
        (&[0x1f, 0x8b, 8, 0, 0][..], Failure::Truncated),
    ] {
        let file = [gzip(a), tail.to_vec()].concat();
        assert_eq!(outcome(&file), (a.to_vec(), Some(failure)), "{tail:?} after the member");
    }
    let mut wrong_size = gzip(a);
    let n = wrong_size.len();
    wrong_size[n - 1] ^= 1;
    assert_eq!(outcome(&wrong_size), (a.to_vec(), Some(Failure::Corrupt)));
}
