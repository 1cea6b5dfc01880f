//! The vendored 8×8 digits data set (`data/digits.csv.gz`: 64 pixel
//! values and a label per row), shared by the `digits` and `model_digits`
//! examples.

use flate2::read::GzDecoder;
use std::io::Read;

/// Pixels per digit.
pub const PIXELS: usize = 64;

/// Pixels (`[rows, 64]`, f32) and labels (`[rows]`, i32) of the data set.
pub fn load() -> Result<(Vec<f32>, Vec<i32>), Box<dyn std::error::Error>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/digits.csv.gz");
    let mut text = String::new();
    GzDecoder::new(std::fs::File::open(path)?).read_to_string(&mut text)?;
    let (mut pixels, mut labels) = (Vec::new(), Vec::new());
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let fields: Vec<f32> = line
            .split(',')
            .map(|f| f.trim().parse::<f32>())
            .collect::<Result<_, _>>()?;
        if fields.len() != PIXELS + 1 {
            return Err(format!("a row has {} fields, not {}", fields.len(), PIXELS + 1).into());
        }
        pixels.extend_from_slice(&fields[..PIXELS]);
        labels.push(fields[PIXELS] as i32);
    }
    Ok((pixels, labels))
}
