#[giving::probe]
trait Forward {
    fn forward(&self, x: f64) -> f64;
}

fn main() {}
