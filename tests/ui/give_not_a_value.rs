// A type that is neither `Clone` nor convertible into a `Value`: the error says what `give!`
// takes and how to give a tensor or a type of one's own.
struct Weights;

fn main() {
    let weights = Weights;
    giving::give!(weights);
}
