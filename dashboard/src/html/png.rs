//! A minimal PNG writer for the heat maps: 8-bit indexed colour, zlib
//! stream of stored (uncompressed) deflate blocks. A heat map is at most
//! a few hundred by a few hundred cells of a ten-colour palette, so a
//! palette image inside the SVG (as a `data:` URI, no fetch) costs one
//! byte per cell where rectangles cost fifty.

fn crc_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    for (n, e) in t.iter_mut().enumerate() {
        let mut c = n as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        *e = c;
    }
    t
}

fn crc32(table: &[u32; 256], bytes: &[u8]) -> u32 {
    let mut c = 0xffff_ffffu32;
    for &b in bytes {
        c = table[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8);
    }
    c ^ 0xffff_ffff
}

fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &x in bytes {
        a = (a + u32::from(x)) % 65521;
        b = (b + a) % 65521;
    }
    (b << 16) | a
}

fn chunk(out: &mut Vec<u8>, table: &[u32; 256], kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(table, &out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

fn zlib_stored(raw: &[u8]) -> Vec<u8> {
    let mut z = vec![0x78, 0x01];
    let mut blocks = raw.chunks(65_535).peekable();
    if blocks.peek().is_none() {
        z.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(b) = blocks.next() {
        z.push(u8::from(blocks.peek().is_none()));
        let len = b.len() as u16;
        z.extend_from_slice(&len.to_le_bytes());
        z.extend_from_slice(&(!len).to_le_bytes());
        z.extend_from_slice(b);
    }
    z.extend_from_slice(&adler32(raw).to_be_bytes());
    z
}

/// An indexed-colour PNG of `width × height` palette indices (row-major).
pub fn indexed(width: u32, height: u32, palette: &[[u8; 3]], pixels: &[u8]) -> Vec<u8> {
    let table = crc_table();
    let mut out = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 3, 0, 0, 0]);
    chunk(&mut out, &table, b"IHDR", &ihdr);
    let plte: Vec<u8> = palette.iter().flatten().copied().collect();
    chunk(&mut out, &table, b"PLTE", &plte);
    let w = width as usize;
    let mut raw = Vec::with_capacity((w + 1) * height as usize);
    for row in 0..height as usize {
        raw.push(0);
        for x in 0..w {
            raw.push(pixels.get(row * w + x).copied().unwrap_or(0));
        }
    }
    chunk(&mut out, &table, b"IDAT", &zlib_stored(&raw));
    chunk(&mut out, &table, b"IEND", &[]);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn checksums_match_known_values() {
        let t = super::crc_table();
        assert_eq!(super::crc32(&t, b"IEND"), 0xae42_6082);
        assert_eq!(super::adler32(b"Wikipedia"), 0x11e6_0398);
        let png = super::indexed(2, 1, &[[0, 0, 0], [255, 255, 255]], &[0, 1]);
        assert_eq!(&png[1..4], b"PNG");
        assert_eq!(&png[png.len() - 8..png.len() - 4], b"IEND");
    }
}
