//! One-way delay derived from orbital geometry: the serving satellite's slant range from the
//! dish plus its range from a ground station, plus a terrestrial part.

use chrono::Duration as ChronoDuration;
use handover_predictor::orbit::{
    Catalogue, Observer, ServingPolicy, handovers, serving_timeline, walker,
};
use rtc_client::link::geometry::{bent_pipe_delay, geometry_delay};
use rtc_client::link::{Capacity, Delay, Link, LinkConfig, Time};
use std::time::Duration;

#[test]
fn a_geometry_delay_follows_the_serving_satellite_and_jumps_at_handovers() {
    let epoch = walker::shipped_epoch();
    let tle = walker::generate(&walker::starlink_gen1(), epoch).unwrap();
    let catalogue = Catalogue::parse(&tle, "starlink-gen1").unwrap();
    // A dish in Seattle and a ground station about 100 km east of it.
    let dish = Observer::new(47.61, -122.33, 50.0).unwrap();
    let gateway = Observer::new(47.61, -121.00, 500.0).unwrap();
    let start = epoch + ChronoDuration::seconds(3600);
    let timeline =
        serving_timeline(&catalogue, &dish, &ServingPolicy::default(), start, 120).unwrap();
    let terrestrial = Duration::from_millis(8);
    let geo = geometry_delay(&catalogue, &gateway, &timeline, start, terrestrial).unwrap();
    assert_eq!(geo.series.len(), 120);
    assert!(
        geo.unserved.is_empty(),
        "unserved seconds {:?}",
        geo.unserved
    );

    for (i, serving) in timeline.iter().enumerate() {
        let serving = serving.unwrap();
        let at = start + ChronoDuration::seconds(i as i64);
        let feeder = catalogue
            .sky_position(serving.norad_id, &gateway, at)
            .unwrap()
            .unwrap()
            .range_km;
        let expected = bent_pipe_delay(serving.position.range_km, feeder, terrestrial);
        assert_eq!(
            geo.series.at(Time::from_secs(i as u64)),
            expected,
            "second {i}"
        );
        // A user leg between zenith (540-570 km) and the 25-degree mask (about 1 200 km).
        assert!((530.0..1300.0).contains(&serving.position.range_km));
    }
    // Within a slot the delay drifts by well under a millisecond a second; at a handover it may
    // jump.
    let hand = handovers(&timeline);
    assert!(!hand.is_empty());
    for i in 1..120u64 {
        let step = geo
            .series
            .at(Time::from_secs(i))
            .abs_diff(geo.series.at(Time::from_secs(i - 1)));
        if !hand.contains(&(i as usize)) {
            assert!(step < Duration::from_micros(300), "second {i}: {step:?}");
        }
    }
    // And a link replays it, interpolating between seconds.
    let link = Link::new(
        LinkConfig::new(Capacity::constant(10_000_000))
            .with_delay(Delay::series(geo.series.clone())),
        1,
    )
    .unwrap();
    let mid = link.delay_at(Time::from_millis(10_500));
    let (a, b) = (
        geo.series.at(Time::from_secs(10)),
        geo.series.at(Time::from_secs(11)),
    );
    assert!(mid >= a.min(b) && mid <= a.max(b));
    let (mean, min, max) = geo.series.summary();
    eprintln!(
        "geometry delay over 120 s at Seattle: mean {mean:?}, min {min:?}, max {max:?}, {} handovers, gateway below 25 deg in {} s",
        hand.len(),
        geo.gateway_hidden.len()
    );
}
