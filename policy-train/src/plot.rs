//! The training-curve picture: the final fit's loss and accuracy, and the cross-validation
//! folds' held-out accuracy, per epoch.

use crate::train::TrainReport;
use anyhow::{Context, Result, anyhow};
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::Path;
use std::sync::Once;

fn register_fonts() {
    static FONTS: Once = Once::new();
    FONTS.call_once(|| {
        for family in ["sans-serif", "serif", "monospace"] {
            let _ =
                plotters::style::register_font(family, FontStyle::Normal, dejavu::sans::regular());
        }
    });
}

fn drawing<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("drawing failed: {e}")
}

/// Draws the curves of `report` into the PNG at `path`.
pub fn training_curve(path: &Path, report: &TrainReport) -> Result<()> {
    register_fonts();
    let context = || format!("cannot write the picture {}", path.display());
    let root = BitMapBackend::new(path, (1200, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(drawing).with_context(context)?;
    let (left, right) = root.split_horizontally(600);
    let epochs = report.final_curve.len().max(1) as f64;

    let max_loss = report
        .final_curve
        .iter()
        .map(|e| e.loss)
        .fold(0.0, f64::max)
        .max(1e-3)
        * 1.1;
    let mut chart = ChartBuilder::on(&left)
        .caption("final fit: training loss", ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..epochs, 0.0..max_loss)
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .x_desc("epoch")
        .y_desc("cross-entropy")
        .draw()
        .map_err(drawing)?;
    chart
        .draw_series(LineSeries::new(
            report
                .final_curve
                .iter()
                .enumerate()
                .map(|(i, e)| (i as f64 + 1.0, e.loss)),
            &BLUE,
        ))
        .map_err(drawing)?;

    let mut chart = ChartBuilder::on(&right)
        .caption("accuracy", ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..epochs, 0.0..1.0)
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .x_desc("epoch")
        .y_desc("fraction correct")
        .draw()
        .map_err(drawing)?;
    chart
        .draw_series(LineSeries::new(
            report
                .final_curve
                .iter()
                .enumerate()
                .map(|(i, e)| (i as f64 + 1.0, e.train_accuracy)),
            &BLUE,
        ))
        .map_err(drawing)?
        .label("final fit, training")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE));
    let palette = [RED, GREEN, MAGENTA, CYAN, BLACK];
    for (f, fold) in report.folds.iter().enumerate() {
        let color = palette[f % palette.len()];
        chart
            .draw_series(LineSeries::new(
                fold.curve
                    .iter()
                    .enumerate()
                    .filter_map(|(i, e)| e.validation_accuracy.map(|a| (i as f64 + 1.0, a))),
                &color,
            ))
            .map_err(drawing)?
            .label(format!("fold {} held-out", f + 1))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(drawing)?;
    root.present().map_err(drawing).with_context(context)?;
    Ok(())
}
