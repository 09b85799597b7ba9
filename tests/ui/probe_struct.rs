#[giving::probe]
struct Model {
    weight: f64,
}

fn main() {
    let _ = Model { weight: 1.0 }.weight;
}
