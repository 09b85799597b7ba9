//! A probed function warns about nothing the function as written does not: a field assigned
//! on an argument (the body moved into a closure once made rustc see a captured copy whose
//! value is never read).
#![deny(warnings)]

struct Ns {
    y: i64,
}

#[giving::probe(overridable(x))]
fn assigns_a_field(mut x: Ns) -> i64 {
    x.y = 3;
    x.y
}

#[giving::probe]
fn assigns_a_field_too(mut x: Ns, z: i64) -> i64 {
    x.y = z;
    x.y + 1
}

#[giving::probe]
async fn assigns_a_field_async(mut x: Ns) -> i64 {
    x.y = 4;
    x.y
}

fn main() {
    assert_eq!(assigns_a_field(Ns { y: 7 }), 3);
    assert_eq!(assigns_a_field_too(Ns { y: 7 }, 2), 3);
    let gv = giving::given();
    let _probe = gv.probe("assigns_a_field > x").unwrap();
    assert_eq!(assigns_a_field(Ns { y: 7 }), 3);
    assert_eq!(futures::executor::block_on(assigns_a_field_async(Ns { y: 7 })), 4);
    gv.finish().unwrap();
}
