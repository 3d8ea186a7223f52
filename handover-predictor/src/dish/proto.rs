//! prost messages and the tonic client/server for `SpaceX.API.Device.Device/Handle`, generated at
//! build time (`build.rs`) from the minimal schema in `proto/` (field numbers: reference A2-A8 in
//! `../shared/reference/starlink-dish-and-orbits.md`).
//!
//! These are wire types. The rest of the crate decodes them into plain structs
//! ([`super::ObstructionMap`], [`super::DishStatus`], [`super::DishLocation`]) and never hands
//! them to callers, except to code that must speak the wire itself (the simulated dish, test
//! servers that misbehave on purpose).
//!
//! Remember that request and response oneof numbers differ (reference A4): `get_status` (request
//! 1004) is answered by `dish_get_status` (response 2004), and response 1004 is `get_device_info`.

/// `SpaceX.API.Device`: the request, the response and the dish's messages.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod device {
    include!(concat!(env!("OUT_DIR"), "/space_x.api.device.rs"));
}

/// `SpaceX.API.Status`: the application status inside a response.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod status {
    include!(concat!(env!("OUT_DIR"), "/space_x.api.status.rs"));
}
