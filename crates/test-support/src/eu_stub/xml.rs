//! The stub's own XML tree (kept apart from the client's, so the stub checks what the client
//! writes rather than agreeing with it by construction) and its answer writer.

use quick_xml::NsReader;
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::name::ResolveResult;

#[derive(Debug, Clone, Default)]
pub struct Node {
    pub ns: Option<String>,
    pub name: String,
    pub attributes: Vec<(Option<String>, String, String)>,
    pub text: String,
    pub children: Vec<Node>,
}

impl Node {
    pub fn is(&self, ns: &str, name: &str) -> bool {
        self.ns.as_deref() == Some(ns) && self.name == name
    }

    pub fn child(&self, ns: &str, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.is(ns, name))
    }

    pub fn unqualified_child(&self, name: &str) -> Option<&Node> {
        self.children
            .iter()
            .find(|c| c.ns.is_none() && c.name == name)
    }

    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(ns, n, _)| ns.is_none() && n == name)
            .map(|(_, _, v)| v.as_str())
    }

    /// `{ns}name` with the namespace spelt out, for messages.
    pub fn qualified(&self) -> String {
        match &self.ns {
            Some(ns) => format!("{{{ns}}}{}", self.name),
            None => self.name.clone(),
        }
    }

    /// Leaf texts under this node, keyed by the path of local names below it.
    pub fn leaves(&self, prefix: &str, out: &mut Vec<(String, String)>) {
        for child in &self.children {
            let path = if prefix.is_empty() {
                child.name.clone()
            } else {
                format!("{prefix}/{}", child.name)
            };
            if child.children.is_empty() {
                out.push((path, child.text.clone()));
            } else {
                child.leaves(&path, out);
            }
        }
    }
}

pub fn parse(text: &str) -> Result<Node, String> {
    let mut reader = NsReader::from_str(text);
    let mut stack: Vec<Node> = Vec::new();
    loop {
        let (resolved, event) = reader.read_resolved_event().map_err(|e| e.to_string())?;
        let ns = match resolved {
            ResolveResult::Bound(ns) => Some(ns.0.to_owned()),
            ResolveResult::Unbound => None,
            ResolveResult::Unknown(p) => return Err(format!("unbound prefix {p}")),
        };
        let empty = matches!(event, Event::Empty(_));
        match event {
            Event::Start(start) | Event::Empty(start) => {
                let mut node = Node {
                    ns,
                    name: start.local_name().as_ref().to_owned(),
                    ..Node::default()
                };
                for attribute in start.attributes() {
                    let attribute = attribute.map_err(|e| e.to_string())?;
                    let key = attribute.key;
                    if key.as_ref().starts_with("xmlns") {
                        continue;
                    }
                    let (resolved, local) = reader.resolver().resolve_attribute(key);
                    let attr_ns = match resolved {
                        ResolveResult::Bound(ns) => Some(ns.0.to_owned()),
                        _ => None,
                    };
                    let value = attribute
                        .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .map_err(|e| e.to_string())?;
                    node.attributes
                        .push((attr_ns, local.as_ref().to_owned(), value.into_owned()));
                }
                if empty {
                    match stack.last_mut() {
                        Some(parent) => parent.children.push(node),
                        None => return Ok(node),
                    }
                } else {
                    stack.push(node);
                }
            }
            Event::End(_) => {
                let node = stack.pop().ok_or("unbalanced end tag")?;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(node),
                    None => return Ok(node),
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
                let text = match reference.resolve_char_ref().map_err(|e| e.to_string())? {
                    Some(c) => c.to_string(),
                    None => {
                        let name = reference.xml10_content();
                        quick_xml::escape::resolve_predefined_entity(&name)
                            .ok_or_else(|| format!("unknown entity {name}"))?
                            .to_owned()
                    }
                };
                if let Some(current) = stack.last_mut() {
                    current.text.push_str(&text);
                }
            }
            Event::DocType(_) => return Err("DOCTYPE is not allowed".into()),
            Event::Eof => return Err("premature end of file".into()),
            _ => {}
        }
    }
}

/// An element to write: name (with prefix), attributes, text or children.
pub enum Out {
    Text(&'static str, String),
    Parent(&'static str, Vec<(&'static str, String)>, Vec<Out>),
    /// Text with attributes.
    Leaf(&'static str, Vec<(&'static str, String)>, String),
}

pub fn text(name: &'static str, value: impl Into<String>) -> Out {
    Out::Text(name, value.into())
}

pub fn parent(name: &'static str, children: Vec<Out>) -> Out {
    Out::Parent(name, Vec::new(), children)
}

pub fn with_attributes(
    name: &'static str,
    attributes: Vec<(&'static str, String)>,
    children: Vec<Out>,
) -> Out {
    Out::Parent(name, attributes, children)
}

fn write_out(w: &mut Writer<Vec<u8>>, out: &Out) -> std::io::Result<()> {
    match out {
        Out::Text(name, value) => {
            w.create_element(*name)
                .write_text_content(BytesText::new(value))?;
        }
        Out::Leaf(name, attributes, value) => {
            w.create_element(*name)
                .with_attributes(attributes.iter().map(|(k, v)| (*k, v.as_str())))
                .write_text_content(BytesText::new(value))?;
        }
        Out::Parent(name, attributes, children) => {
            let element = w
                .create_element(*name)
                .with_attributes(attributes.iter().map(|(k, v)| (*k, v.as_str())));
            if children.is_empty() {
                element.write_empty()?;
            } else {
                element.write_inner_content(|w| {
                    for child in children {
                        write_out(w, child)?;
                    }
                    Ok(())
                })?;
            }
        }
    }
    Ok(())
}

/// A whole document with `root` as its element.
pub fn document(root: &Out) -> String {
    let mut w = Writer::new(Vec::new());
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))
        .unwrap();
    write_out(&mut w, root).unwrap();
    String::from_utf8(w.into_inner()).unwrap()
}
