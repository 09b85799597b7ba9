//! `GIVING_TRACE`'s `channels` option and channels switched at run time (libpvti's), read back
//! with Perfetto's own protos. One test in its own process: channel switches are process-wide.

use giving::instant;
use giving::timeline::{Channel, enable_channel, enable_only_channels, list_channels};
use giving_instruments::Overseer;
use giving_instruments::timeline::{Trace, TraceOptions};

mod perfetto_check;
use perfetto_check::Summary;

#[test]
fn only_the_channels_of_the_option_are_traced_until_one_is_enabled() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        r#"{{"enable": "true", "directory": "{}", "channels": ["kept"]}}"#,
        dir.path().display()
    );
    let options = TraceOptions::parse(&text).unwrap();
    assert_eq!(options.channels, Some(vec!["kept".to_owned()]));
    let trace = Trace::from_options(&options).unwrap().unwrap();
    let path = trace.path().to_path_buf();
    let run = Overseer::new().with(trace).run(|| {
        let (kept, dropped) = (Channel::new("kept"), Channel::new("dropped"));
        kept.trace("a", || ());
        dropped.trace("b", || ());
        instant!(dropped, "not traced");
        assert!(list_channels().contains(&("dropped".to_owned(), false)));
        enable_channel("dropped");
        dropped.trace("late", || ());
        kept.disable();
        kept.trace("after disable", || ());
    });
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    enable_only_channels(None::<&[&str]>);

    let Some(trace) = Summary::read(&path) else {
        return;
    };
    trace.assert_well_formed();
    let names = |track: &str| -> Vec<String> {
        let uuid = trace.tracks_named(track);
        assert_eq!(uuid.len(), 1, "{track}");
        trace.0["slices"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["track"].as_u64() == uuid[0].parse::<u64>().ok())
            .map(|s| s["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names("kept"), ["a"]);
    assert_eq!(names("dropped"), ["late"]);
    assert!(trace.0["instants"].as_array().unwrap().is_empty());

    // A list that is not of names is refused, naming the option.
    let error = TraceOptions::parse(r#"{"channels": "kept"}"#).unwrap_err();
    assert!(
        error.to_string().contains("`channels` cannot be"),
        "{error}"
    );
    let error = TraceOptions::parse(r#"{"channels": [1]}"#).unwrap_err();
    assert!(
        error.to_string().contains("`channels` cannot be"),
        "{error}"
    );
}
