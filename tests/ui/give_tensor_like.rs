// A `Clone` type that does not convert into a `Value`, as a burn tensor: the error is
// `give!`'s own, pointing to `LazyTensor`, not rustc's note on `Value: From<…>`.
#[derive(Clone)]
struct Tensor;

fn main() {
    let loss = Tensor;
    giving::give!(loss);
    giving::give!(step = 1u64, loss = loss.clone());
}
