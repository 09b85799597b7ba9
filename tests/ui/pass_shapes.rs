//! Functions of every shape the macro accepts still compile and behave.

use std::fmt::Debug;

#[giving::probe]
fn generic<T: Clone + Debug>(x: T, r: &T, n: usize) -> Vec<T> {
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(x.clone());
    }
    let maybe = Some(r.clone());
    let result: Result<Vec<T>, ()> = Ok(out.clone());
    let (_, _) = (maybe, result);
    out
}

#[giving::probe]
fn borrowed<'a>(items: &'a [u32], key: &str) -> Option<&'a u32> {
    let found = items.iter().find(|i| i.to_string() == key);
    found
}

#[giving::probe]
fn returns_impl(n: u32) -> impl Iterator<Item = u32> {
    let limit = n * 2;
    0..limit
}

#[giving::probe]
fn parse(text: &str) -> Result<i64, std::num::ParseIntError> {
    let value: i64 = text.trim().parse()?;
    let mut doubled;
    doubled = value * 2;
    doubled += 1;
    Ok(doubled)
}

struct Holder {
    items: Vec<u32>,
}

#[giving::probe]
impl Holder {
    fn first_mut(&mut self) -> Option<&mut u32> {
        let first = self.items.first_mut();
        first
    }

    fn into_items(self) -> Vec<u32> {
        self.items
    }

    const fn capacity() -> usize {
        4
    }
}

#[giving::probe]
async fn later(x: u32) -> Result<u32, String> {
    let y = x.checked_add(1).ok_or("overflow")?;
    Ok(y)
}

#[giving::probe]
fn labelled(grid: Vec<Vec<u32>>) -> u32 {
    let mut total = 0;
    'rows: for row in grid {
        for (i, cell) in row.into_iter().enumerate() {
            if i > 2 {
                continue 'rows;
            }
            total += cell;
        }
    }
    let closure = |x: u32| {
        let inside = x + 1;
        inside
    };
    closure(total)
}

fn main() {
    assert_eq!(generic("a", &"b", 2), vec!["a", "a"]);
    assert_eq!(borrowed(&[1, 2], "2"), Some(&2));
    assert_eq!(returns_impl(2).count(), 4);
    assert_eq!(parse(" 20 "), Ok(41));
    let mut holder = Holder { items: vec![1] };
    *holder.first_mut().unwrap() = 5;
    assert_eq!(holder.into_items(), vec![5]);
    assert_eq!(Holder::capacity(), 4);
    assert_eq!(futures::executor::block_on(later(1)), Ok(2));
    assert_eq!(labelled(vec![vec![1, 2, 3, 4], vec![5]]), 12);
    assert_eq!(inferred_later(3), 3);
}

struct Tensorish(#[allow(dead_code)] Vec<f32>);

/// Bindings whose type is inferred later, from a type the probe cannot convert.
#[giving::probe]
fn inferred_later(n: usize) -> usize {
    let mut best = None;
    let mut all = Vec::new();
    for i in 0..n {
        all.push(Tensorish(vec![i as f32]));
        best = Some(Tensorish(vec![0.0]));
    }
    let count: usize = Default::default();
    best.map_or(count, |_| all.len())
}
