//! A window's latencies, for a heatmap.

pub fn snippet() {
    let window_latencies = vec![0.5, 4.0, 40.0, 400.0];
    // SNIPPET
}

#[test]
fn runs() {
    snippet();
}
