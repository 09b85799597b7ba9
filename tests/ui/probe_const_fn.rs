#[giving::probe]
const fn square(x: u32) -> u32 {
    x * x
}

fn main() {
    let _ = square(2);
}
