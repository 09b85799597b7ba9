//! The few TensorFlow messages an event file holds (`tensorflow/core/util/event.proto`,
//! `tensorflow/core/framework/summary.proto`), with their field numbers; `prost` encodes
//! them. A `oneof` is written as its members, each an optional field with the member's
//! number (on the wire, a oneof is exactly that). Fields we never write are left out.

/// `Event`: one record of an event file.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TfEvent {
    /// Seconds since the Unix epoch.
    #[prost(double, tag = "1")]
    pub(crate) wall_time: f64,
    /// The global step.
    #[prost(int64, tag = "2")]
    pub(crate) step: i64,
    /// `oneof what`: the first record of a file, `brain.Event:2`.
    #[prost(string, optional, tag = "3")]
    pub(crate) file_version: Option<String>,
    /// `oneof what`: scalars.
    #[prost(message, optional, tag = "5")]
    pub(crate) summary: Option<Summary>,
}

/// `Summary`: the values of one step.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Summary {
    /// The values.
    #[prost(message, repeated, tag = "1")]
    pub(crate) value: Vec<SummaryValue>,
}

/// `Summary.Value`: one tagged scalar or histogram.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct SummaryValue {
    /// The series' name.
    #[prost(string, tag = "1")]
    pub(crate) tag: String,
    /// `oneof value`: a scalar.
    #[prost(float, optional, tag = "2")]
    pub(crate) simple_value: Option<f32>,
    /// `oneof value`: a histogram.
    #[prost(message, optional, tag = "5")]
    pub(crate) histo: Option<HistogramProto>,
}

/// `HistogramProto`: a histogram of one step (what `tf.summary.histogram` writes and
/// TensorBoard's Histograms and Distributions tabs show). Bucket `i` counts the values in
/// `(bucket_limit[i-1], bucket_limit[i]]`; TensorBoard draws the first bucket from `min` and the
/// last to `max`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct HistogramProto {
    /// The smallest value.
    #[prost(double, tag = "1")]
    pub(crate) min: f64,
    /// The largest value.
    #[prost(double, tag = "2")]
    pub(crate) max: f64,
    /// How many values.
    #[prost(double, tag = "3")]
    pub(crate) num: f64,
    /// Their sum.
    #[prost(double, tag = "4")]
    pub(crate) sum: f64,
    /// The sum of their squares.
    #[prost(double, tag = "5")]
    pub(crate) sum_squares: f64,
    /// Each bucket's right edge.
    #[prost(double, repeated, tag = "6")]
    pub(crate) bucket_limit: Vec<f64>,
    /// Each bucket's count.
    #[prost(double, repeated, tag = "7")]
    pub(crate) bucket: Vec<f64>,
}
