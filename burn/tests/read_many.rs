//! Lazy tensors read together (`LazyValue::resolve_all`): one read per device, each value the
//! same as reading it alone.

use burn::backend::Flex;
use burn::tensor::Tensor;
use giving::{LazyValue, Value};
use giving_burn::{LazyTensor, resolution_count};

#[test]
fn tensors_read_together_give_what_each_gives_alone() {
    let device = Default::default();
    let scalars: Vec<Tensor<Flex, 1>> = (0..5)
        .map(|i| Tensor::from_floats([i as f32 * 0.5], &device))
        .collect();
    let matrix = Tensor::<Flex, 2>::from_floats([[1.0, 2.0], [3.0, 4.0]], &device);
    let empty = Tensor::<Flex, 1>::empty([0], &device);

    let mut together: Vec<LazyValue> = scalars
        .iter()
        .map(|t| LazyValue::new(LazyTensor::new(t.clone())))
        .collect();
    together.push(LazyValue::new(LazyTensor::new(empty.clone())));
    let matrix_together = LazyValue::new(LazyTensor::new(matrix.clone()));
    let before = resolution_count();
    let mut all: Vec<&LazyValue> = together.iter().collect();
    all.push(&matrix_together);
    LazyValue::resolve_all(&all);
    assert!(all.iter().all(|v| v.is_resolved()));
    assert_eq!(
        resolution_count() - before,
        7,
        "every tensor counted as read"
    );

    // A 2-D tensor is its own type (`LazyTensor<_, 2>`): a batch of its own, same result.
    let alone = |tensor: LazyTensor<Flex, 1>| LazyValue::new(tensor).resolve().unwrap().clone();
    for (value, tensor) in together.iter().zip(&scalars) {
        assert_eq!(
            value.resolve().unwrap(),
            &alone(LazyTensor::new(tensor.clone()))
        );
    }
    assert_eq!(together[5].resolve().unwrap(), &Value::List(vec![]));
    assert_eq!(
        matrix_together.resolve().unwrap(),
        LazyValue::new(LazyTensor::new(matrix)).resolve().unwrap()
    );
    assert_eq!(together[3].resolve().unwrap(), &Value::F64(1.5));
}
