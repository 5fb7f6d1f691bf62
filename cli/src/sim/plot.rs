//! The SVG figures of the `sim` scenarios: one frame, one way to draw a
//! labelled line and one legend, so every plot looks the same.

use std::path::Path;

use anyhow::Context;
use metaroce_fabric::scenario::TransportKind;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::prelude::*;

/// A chart drawn on a figure (borrowed for `'a`) written to a path
/// (borrowed for `'p`), its axes of coordinate types `X` and `Y`.
pub(super) type Chart<'a, 'p, X, Y> = ChartContext<'a, SVGBackend<'p>, Cartesian2d<X, Y>>;

/// Colours of series that are not transports, in order.
pub(super) const PALETTE: [RGBColor; 3] = [RED, BLUE, GREEN];

/// Colour of a transport in every plot.
pub(super) fn colour(kind: TransportKind) -> RGBColor {
    match kind {
        TransportKind::MetaRoce => RED,
        TransportKind::RoceV2 => BLUE,
        TransportKind::Irn => GREEN,
    }
}

/// Colour of the transport named `name` (`None`: not a transport).
pub(super) fn colour_of(name: &str) -> Option<RGBColor> {
    TransportKind::ALL
        .into_iter()
        .find(|k| k.name() == name)
        .map(colour)
}

/// An 800×500 white SVG figure to be written to `path`.
pub(super) fn figure(path: &Path) -> anyhow::Result<DrawingArea<SVGBackend<'_>, Shift>> {
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    Ok(root)
}

/// Axis labels of a chart.
pub(super) struct Axes<'s> {
    /// The horizontal axis.
    pub x: &'s str,
    /// The vertical axis.
    pub y: &'s str,
}

/// A chart filling `root` with a caption, ranges `x` and `y` and a mesh
/// labelled by `axes`.
pub(super) fn chart<'a, 'p, X, Y>(
    root: &'a DrawingArea<SVGBackend<'p>, Shift>,
    caption: &str,
    x: X,
    y: Y,
    axes: Axes,
) -> anyhow::Result<Chart<'a, 'p, X::CoordDescType, Y::CoordDescType>>
where
    X: AsRangedCoord,
    Y: AsRangedCoord,
    X::CoordDescType: ValueFormatter<<X::CoordDescType as Ranged>::ValueType>,
    Y::CoordDescType: ValueFormatter<<Y::CoordDescType as Ranged>::ValueType>,
{
    let mut chart = ChartBuilder::on(root)
        .caption(caption, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(x, y)?;
    chart
        .configure_mesh()
        .x_desc(axes.x)
        .y_desc(axes.y)
        .draw()?;
    Ok(chart)
}

/// Draws `points` as a line in `colour`, `width` pixels wide, with its
/// legend entry `label`; with `dots`, a dot on each point as well.
pub(super) fn line<X: Ranged<ValueType = f64>, Y: Ranged<ValueType = f64>>(
    chart: &mut Chart<'_, '_, X, Y>,
    points: Vec<(f64, f64)>,
    colour: RGBColor,
    width: u32,
    label: String,
    dots: bool,
) -> anyhow::Result<()> {
    let style = colour.stroke_width(width);
    let marks: Vec<Circle<(f64, f64), i32>> = match dots {
        true => points
            .iter()
            .map(|&p| Circle::new(p, 3, colour.filled()))
            .collect(),
        false => Vec::new(),
    };
    chart
        .draw_series(LineSeries::new(points, style))?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    if !marks.is_empty() {
        chart.draw_series(marks)?;
    }
    Ok(())
}

/// Draws the legend at `position` and writes the figure to `path`.
pub(super) fn finish<'a, 'p, X: Ranged, Y: Ranged>(
    mut chart: Chart<'a, 'p, X, Y>,
    root: &'a DrawingArea<SVGBackend<'p>, Shift>,
    position: SeriesLabelPosition,
    path: &Path,
) -> anyhow::Result<()> {
    chart
        .configure_series_labels()
        .position(position)
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()?;
    root.present()
        .with_context(|| format!("writing {}", path.display()))
}
