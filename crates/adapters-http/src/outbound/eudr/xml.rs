//! A small element tree read with quick-xml's namespace-aware reader: answers of the IS are a
//! few kilobytes, and reading them as a tree keeps the navigation plain.

use quick_xml::NsReader;
use quick_xml::events::Event;
use quick_xml::name::ResolveResult;

/// Answers nest a dozen levels; anything far deeper is not a SOAP answer of the IS.
const MAX_DEPTH: usize = 64;

/// One element: its namespace, local name, attributes (by local name), text and children.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Element {
    pub ns: Option<String>,
    pub name: String,
    pub attributes: Vec<(String, String)>,
    /// The element's own character data, concatenated (references resolved).
    pub text: String,
    pub children: Vec<Element>,
}

impl Element {
    /// Whether this element is `{ns}name`.
    pub fn is(&self, ns: &str, name: &str) -> bool {
        self.ns.as_deref() == Some(ns) && self.name == name
    }

    /// The first child `{ns}name`.
    pub fn child(&self, ns: &str, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.is(ns, name))
    }

    /// Every child `{ns}name`, in order.
    pub fn children_named<'a>(
        &'a self,
        ns: &'a str,
        name: &'a str,
    ) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.is(ns, name))
    }

    /// The trimmed text of the first child `{ns}name`.
    pub fn child_text(&self, ns: &str, name: &str) -> Option<&str> {
        self.child(ns, name).map(|c| c.text.trim())
    }

    /// Every descendant `{ns}name`, depth first.
    pub fn descendants<'a>(&'a self, ns: &str, name: &str, found: &mut Vec<&'a Element>) {
        for child in &self.children {
            if child.is(ns, name) {
                found.push(child);
            }
            child.descendants(ns, name, found);
        }
    }
}

/// Parses a whole document into its root element.
pub fn parse(text: &str) -> Result<Element, String> {
    let mut reader = NsReader::from_str(text);
    let mut stack: Vec<Element> = Vec::new();
    loop {
        let (resolved, event) = reader
            .read_resolved_event()
            .map_err(|e| format!("not well-formed XML: {e}"))?;
        let ns = match resolved {
            ResolveResult::Bound(ns) => Some(ns.0.to_owned()),
            ResolveResult::Unbound => None,
            ResolveResult::Unknown(prefix) => {
                return Err(format!("undeclared namespace prefix `{prefix}`"));
            }
        };
        match event {
            Event::Start(start) | Event::Empty(start) if stack.len() >= MAX_DEPTH => {
                let _ = start;
                return Err("elements nested too deeply".into());
            }
            Event::Start(start) => {
                stack.push(start_element(ns, &start)?);
            }
            Event::Empty(start) => {
                let element = start_element(ns, &start)?;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(element),
                    None => return Ok(element),
                }
            }
            Event::End(_) => {
                let element = stack.pop().ok_or("an end tag without a start")?;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(element),
                    None => return Ok(element),
                }
            }
            Event::Text(text) => {
                if let Some(current) = stack.last_mut() {
                    current.text.push_str(&text.xml10_content());
                }
            }
            Event::CData(data) => {
                if let Some(current) = stack.last_mut() {
                    current.text.push_str(&data.xml10_content());
                }
            }
            Event::GeneralRef(reference) => {
                let resolved = match reference
                    .resolve_char_ref()
                    .map_err(|e| format!("bad character reference: {e}"))?
                {
                    Some(c) => c.to_string(),
                    None => {
                        let name = reference.xml10_content();
                        quick_xml::escape::resolve_predefined_entity(&name)
                            .ok_or_else(|| format!("unknown entity `&{name};`"))?
                            .to_owned()
                    }
                };
                if let Some(current) = stack.last_mut() {
                    current.text.push_str(&resolved);
                }
            }
            Event::DocType(_) => return Err("a document type declaration is not accepted".into()),
            Event::Eof => return Err("the document ends before its root element does".into()),
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) => {}
        }
    }
}

fn start_element(
    ns: Option<String>,
    start: &quick_xml::events::BytesStart<'_>,
) -> Result<Element, String> {
    let name = start.local_name().as_ref().to_owned();
    let mut attributes = Vec::new();
    for attribute in start.attributes() {
        let attribute = attribute.map_err(|e| format!("bad attribute: {e}"))?;
        let key = attribute.key;
        if key.as_ref().starts_with("xmlns") {
            continue;
        }
        let value = attribute
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map_err(|e| format!("bad attribute value: {e}"))?;
        attributes.push((key.local_name().as_ref().to_owned(), value.into_owned()));
    }
    Ok(Element {
        ns,
        name,
        attributes,
        ..Element::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_carry_their_resolved_namespace_and_unescaped_text() {
        let root = parse(
            r#"<?xml version="1.0"?><a:root xmlns:a="urn:a" xmlns:b="urn:b"><b:x k="1 &amp; 2">one &lt; two &#65;</b:x><y/></a:root>"#,
        )
        .unwrap();
        assert!(root.is("urn:a", "root"));
        let x = root.child("urn:b", "x").unwrap();
        assert_eq!(x.text, "one < two A");
        assert_eq!(x.attributes, vec![("k".to_owned(), "1 & 2".to_owned())]);
        assert_eq!(root.children[1].ns, None);
        assert_eq!(root.children[1].name, "y");
    }

    #[test]
    fn broken_documents_are_errors() {
        assert!(parse("<a><b></a>").is_err());
        assert!(parse("<a>").is_err());
        assert!(parse("<x:a/>").is_err());
        assert!(parse("<html>Bad gateway").is_err());
    }
}
