//! Binding the implied streams inside a peer connection.

use super::streams::{fec_stream, padding_stream, rtx_stream};
use rtc_interceptor::{Interceptor, StreamInfo, TaggedPacket};
use rtc_shared::error::Error;
use sansio::Protocol;
use std::time::Instant;

/// An interceptor that, when a media stream is bound, also binds the RTX and repair streams it
/// names and the padding stream, if the sender pads on one of its own, on the interceptor it
/// wraps, first.
///
/// A webrtc-rs peer connection binds one stream per encoding: the video stream, naming its RTX
/// and repair SSRCs. The TWCC sender numbers, and the congestion controller records, only the
/// packets of bound streams; without this, retransmissions, repair packets and probes would be
/// neither acknowledged nor counted by the estimator.
pub(crate) struct BindAlso<I> {
    inner: I,
    /// The padding stream's SSRC and payload type, when it is a stream of its own.
    padding: Option<(u32, u8)>,
}

impl<I> BindAlso<I> {
    pub(crate) fn new(inner: I, padding: Option<(u32, u8)>) -> Self {
        Self { inner, padding }
    }

    fn implied(&self, info: &StreamInfo) -> Vec<StreamInfo> {
        if matches!(info.mime_type.as_str(), "video/rtx" | "video/flexfec-03") {
            return Vec::new();
        }
        let mut out: Vec<StreamInfo> = [rtx_stream(info), fec_stream(info)]
            .into_iter()
            .flatten()
            .collect();
        if let Some((ssrc, payload_type)) = self.padding {
            out.push(padding_stream(info, ssrc, payload_type));
        }
        out
    }
}

impl<I: Interceptor> Protocol<TaggedPacket, TaggedPacket, ()> for BindAlso<I> {
    type Rout = TaggedPacket;
    type Wout = TaggedPacket;
    type Eout = ();
    type Error = Error;
    type Time = Instant;

    fn handle_read(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        self.inner.handle_read(msg)
    }

    fn poll_read(&mut self) -> Option<Self::Rout> {
        self.inner.poll_read()
    }

    fn handle_write(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        self.inner.handle_write(msg)
    }

    fn poll_write(&mut self) -> Option<Self::Wout> {
        self.inner.poll_write()
    }

    fn handle_event(&mut self, evt: ()) -> Result<(), Self::Error> {
        self.inner.handle_event(evt)
    }

    fn poll_event(&mut self) -> Option<Self::Eout> {
        self.inner.poll_event()
    }

    fn handle_timeout(&mut self, now: Instant) -> Result<(), Self::Error> {
        self.inner.handle_timeout(now)
    }

    fn poll_timeout(&mut self) -> Option<Instant> {
        self.inner.poll_timeout()
    }

    fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close()
    }
}

impl<I: Interceptor> Interceptor for BindAlso<I> {
    fn bind_local_stream(&mut self, info: &StreamInfo) {
        for extra in self.implied(info) {
            self.inner.bind_local_stream(&extra);
        }
        self.inner.bind_local_stream(info);
    }

    fn unbind_local_stream(&mut self, info: &StreamInfo) {
        self.inner.unbind_local_stream(info);
        for extra in self.implied(info) {
            self.inner.unbind_local_stream(&extra);
        }
    }

    fn bind_remote_stream(&mut self, info: &StreamInfo) {
        self.inner.bind_remote_stream(info);
    }

    fn unbind_remote_stream(&mut self, info: &StreamInfo) {
        self.inner.unbind_remote_stream(info);
    }
}
