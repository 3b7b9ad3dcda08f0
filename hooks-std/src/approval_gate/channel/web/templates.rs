//! The page's templates (minijinja, HTML autoescaped) and static assets,
//! compiled into the crate: no front-end build, nothing from a CDN.

use minijinja::Environment;
use serde::Serialize;

/// The script of the page's live updates.
pub(crate) const APP_JS: &str = include_str!("assets/app.js");

/// The page's style sheet.
pub(crate) const STYLE_CSS: &str = include_str!("assets/style.css");

const TEMPLATES: [(&str, &str); 8] = [
    ("layout.html", include_str!("assets/layout.html")),
    ("row.html", include_str!("assets/row.html")),
    ("decide.html", include_str!("assets/decide.html")),
    ("recent.html", include_str!("assets/recent.html")),
    ("index.html", include_str!("assets/index.html")),
    ("detail.html", include_str!("assets/detail.html")),
    ("login.html", include_str!("assets/login.html")),
    ("message.html", include_str!("assets/message.html")),
];

/// The loaded templates. Names end in `.html`, so every value is
/// HTML-escaped unless a template says otherwise (none does).
pub(crate) struct Templates {
    env: Environment<'static>,
}

impl Templates {
    pub(crate) fn load() -> Result<Self, String> {
        let mut env = Environment::new();
        for (name, source) in TEMPLATES {
            env.add_template(name, source)
                .map_err(|error| format!("{name}: {error}"))?;
        }
        Ok(Templates { env })
    }

    /// Renders `name` with `context`; a failure is logged and shown as a
    /// plain error (it is a bug here, never the visitor's doing).
    pub(crate) fn render(&self, name: &str, context: impl Serialize) -> Result<String, String> {
        self.env
            .get_template(name)
            .and_then(|template| template.render(context))
            .map_err(|error| {
                tracing::error!(%error, template = name, "approvals page: a template failed");
                format!("the page could not be drawn ({name})")
            })
    }
}
