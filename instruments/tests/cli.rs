//! `giving log dump` and `giving log stats` as library functions.

use giving::{Event, Timestamp, Value};
use giving_instruments::log::{LogHeader, LogWriter, dump, stats};

fn write(path: &std::path::Path, n: u64, close: bool) {
    let mut header = LogHeader::for_this_process();
    header.start_time = Timestamp::from_nanos(1_000_000_000);
    let mut writer = LogWriter::create(path, &header).unwrap();
    for i in 0..n {
        let mut gpu = std::collections::BTreeMap::new();
        gpu.insert("load".to_owned(), Value::F64(i as f64 / 10.0));
        let mut gpus = std::collections::BTreeMap::new();
        gpus.insert("0".to_owned(), Value::Map(gpu));
        let event = Event::builder()
            .field("step", i)
            .field("loss", 1.0 / (i + 1) as f64)
            .field("gpudata", Value::Map(gpus))
            .time(Timestamp::from_nanos(1_000_000_000 + i * 500_000_000))
            .build();
        writer.write(&event).unwrap();
    }
    if close {
        writer.close(0).unwrap();
    } else {
        writer.flush().unwrap();
    }
}

#[test]
fn dump_prints_text_and_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.msgpack");
    write(&path, 3, true);
    let mut out = Vec::new();
    let summary = dump(&path, false, &mut out).unwrap();
    assert_eq!(summary.events, 3);
    assert!(summary.cut.is_none());
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("# giving-log v1 started 1970-01-01 00:00:01.000 UTC"),
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[2],
        "+0.500000s  step=1 loss=0.5 gpudata={0: {load: 0.1}}"
    );

    let mut out = Vec::new();
    dump(&path, true, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["header"]["format"], "giving-log");
    assert_eq!(lines[2]["time"], 1_500_000_000u64);
    assert_eq!(lines[2]["data"]["loss"], 0.5);
}

#[test]
fn stats_count_keys_and_summarise_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.msgpack");
    write(&path, 11, false);
    let stats = stats(&path).unwrap();
    assert_eq!(stats.events, 11);
    assert_eq!(stats.keys["step"], 11);
    let (first, last) = stats.span.unwrap();
    assert_eq!(last.duration_since(first).as_secs_f64(), 5.0);
    let step = stats.numeric["step"];
    assert_eq!(
        (step.count, step.min, step.max, step.mean),
        (11, 0.0, 10.0, 5.0)
    );
    assert_eq!(stats.numeric["gpudata.0.load"].max, 1.0);
    assert!(
        stats.cut.as_ref().unwrap().is_truncation(),
        "no end record: reported"
    );
    let report = stats.to_string();
    assert!(report.contains("11 events over 5.000 s"), "{report}");
    assert!(report.contains("gpudata.0.load"), "{report}");
    assert!(report.contains("warning:"), "{report}");
}
