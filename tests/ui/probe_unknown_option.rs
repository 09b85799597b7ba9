#[giving::probe(overrideable(x))]
fn f(x: u32) -> u32 {
    x
}

fn main() {
    let _ = f(2);
}
