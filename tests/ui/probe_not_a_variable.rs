#[giving::probe(overridable(loader))]
fn train(data: Vec<f64>) -> f64 {
    let loder = data.into_iter();
    loder.sum()
}

fn main() {
    let _ = train(vec![1.0]);
}
