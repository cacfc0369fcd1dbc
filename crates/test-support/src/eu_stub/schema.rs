//! What the real server's XSD validation would refuse in a request body: element names,
//! namespaces, order, cardinality, and the simple types' lengths, patterns and enumerations
//! (release 8.2.1 schemas as the facts sheet §5–§6 give them). A violation is reported as a
//! Xerces-style `cvc-…` text, which the stub sends in an "Unmarshalling Error" fault.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::ns::{COMMON, DDS, VERIFY};
use super::xml::Node;

type Check = fn(&str) -> Result<(), String>;

enum Kind {
    Simple(Check),
    Complex(&'static [Particle]),
}

struct Particle {
    ns: &'static str,
    name: &'static str,
    min: usize,
    max: usize,
    kind: Kind,
}

const fn el(ns: &'static str, name: &'static str, min: usize, max: usize, kind: Kind) -> Particle {
    Particle {
        ns,
        name,
        min,
        max,
        kind,
    }
}

fn max_len(text: &str, max: usize) -> Result<(), String> {
    let n = text.chars().count();
    if n > max {
        return Err(format!(
            "cvc-maxLength-valid: Value '{text}' with length = '{n}' is not facet-valid with respect to maxLength '{max}'."
        ));
    }
    Ok(())
}

fn len_between(text: &str, min: usize, max: usize) -> Result<(), String> {
    let n = text.chars().count();
    if n < min {
        return Err(format!(
            "cvc-minLength-valid: Value '{text}' with length = '{n}' is not facet-valid with respect to minLength '{min}'."
        ));
    }
    max_len(text, max)
}

fn one_of(text: &str, values: &[&str]) -> Result<(), String> {
    if values.contains(&text) {
        Ok(())
    } else {
        Err(format!(
            "cvc-enumeration-valid: Value '{text}' is not facet-valid with respect to enumeration '[{}]'.",
            values.join(", ")
        ))
    }
}

fn pattern(text: &str, ok: bool, pattern: &str) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(format!(
            "cvc-pattern-valid: Value '{text}' is not facet-valid with respect to pattern '{pattern}'."
        ))
    }
}

fn reference_number(t: &str) -> Result<(), String> {
    max_len(t, 14)
}
fn verification_number(t: &str) -> Result<(), String> {
    len_between(t, 5, 35)
}
fn internal_reference(t: &str) -> Result<(), String> {
    max_len(t, 50)
}
fn uuid(t: &str) -> Result<(), String> {
    let groups: Vec<&str> = t.split('-').collect();
    let lengths = [8, 4, 4, 4, 12];
    let ok = groups.len() == 5
        && groups
            .iter()
            .zip(lengths)
            .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()));
    pattern(
        t,
        ok,
        "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    )
}
fn operator_role(t: &str) -> Result<(), String> {
    one_of(t, &["OPERATOR", "REPRESENTATIVE_OPERATOR"])
}
fn activity_type(t: &str) -> Result<(), String> {
    one_of(t, &["DOMESTIC", "IMPORT", "EXPORT"])
}
fn european_country(t: &str) -> Result<(), String> {
    one_of(
        t,
        &[
            "AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GR", "HR", "HU",
            "IE", "IT", "LT", "LU", "LV", "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK", "XI",
        ],
    )
}
fn country(t: &str) -> Result<(), String> {
    pattern(
        t,
        t.len() == 2 && t.chars().all(|c| c.is_ascii_alphabetic()),
        "[a-zA-Z]{2}",
    )
}
fn comment(t: &str) -> Result<(), String> {
    max_len(t, 2000)
}
fn long(t: &str) -> Result<(), String> {
    t.trim()
        .parse::<i64>()
        .map(|_| ())
        .map_err(|_| format!("cvc-datatype-valid.1.2.1: '{t}' is not a valid value for 'integer'."))
}
fn boolean(t: &str) -> Result<(), String> {
    match t.trim() {
        "true" | "false" | "1" | "0" => Ok(()),
        _ => Err(format!(
            "cvc-datatype-valid.1.2.1: '{t}' is not a valid value for 'boolean'."
        )),
    }
}
fn description_of_goods(t: &str) -> Result<(), String> {
    max_len(t, 150)
}
/// xs:decimal with at most `total` digits, `fraction` of them after the point.
fn decimal(t: &str, total: usize, fraction: usize) -> Result<(), String> {
    let s = t.trim();
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (int, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let digits_only = |p: &str| p.chars().all(|c| c.is_ascii_digit());
    if unsigned.is_empty()
        || (int.is_empty() && frac.is_empty())
        || !digits_only(int)
        || !digits_only(frac)
    {
        return Err(format!(
            "cvc-datatype-valid.1.2.1: '{t}' is not a valid value for 'decimal'."
        ));
    }
    let frac = frac.trim_end_matches('0');
    let int = int.trim_start_matches('0');
    if frac.len() > fraction {
        return Err(format!(
            "cvc-fractionDigits-valid: Value '{t}' has {} fraction digits, but the number of fraction digits has been limited to {fraction}.",
            frac.len()
        ));
    }
    if int.len() + frac.len() > total {
        return Err(format!(
            "cvc-totalDigits-valid: Value '{t}' has {} total digits, but the number of total digits has been limited to {total}.",
            int.len() + frac.len()
        ));
    }
    Ok(())
}
fn percentage(t: &str) -> Result<(), String> {
    decimal(t, 31, 3)
}
fn quantity(t: &str) -> Result<(), String> {
    decimal(t, 16, 6)?;
    if t.trim().starts_with('-') {
        return Err(format!(
            "cvc-minInclusive-valid: Value '{t}' is not facet-valid with respect to minInclusive '0'."
        ));
    }
    Ok(())
}
fn unit_qualifier(t: &str) -> Result<(), String> {
    len_between(t, 3, 4)
}
fn hs_heading(t: &str) -> Result<(), String> {
    pattern(
        t,
        (2..=6).contains(&t.len()) && t.chars().all(|c| c.is_ascii_digit()),
        "[0-9]{2,6}",
    )
}
fn species_name(t: &str) -> Result<(), String> {
    len_between(t, 1, 200)
}
fn producer_name(t: &str) -> Result<(), String> {
    max_len(t, 500)
}
fn base64_binary(t: &str) -> Result<(), String> {
    let compact: String = t.chars().filter(|c| !c.is_whitespace()).collect();
    STANDARD.decode(compact).map(|_| ()).map_err(|_| {
        "cvc-datatype-valid.1.2.1: the value is not a valid value for 'base64Binary'.".to_owned()
    })
}
fn identifier_type(t: &str) -> Result<(), String> {
    one_of(
        t,
        &[
            "eori", "vat", "gln", "tin", "cbr", "cin", "duns", "comp_num", "comp_reg", "oni",
        ],
    )
}
fn identifier_value(t: &str) -> Result<(), String> {
    max_len(t, 80)
}
fn street(t: &str) -> Result<(), String> {
    len_between(t, 1, 300)
}
fn postal_code(t: &str) -> Result<(), String> {
    len_between(t, 1, 80)
}
fn city(t: &str) -> Result<(), String> {
    len_between(t, 1, 200)
}
fn full_address(t: &str) -> Result<(), String> {
    len_between(t, 1, 250)
}
fn email(t: &str) -> Result<(), String> {
    let ok = t
        .split_once('@')
        .is_some_and(|(user, domain)| !user.is_empty() && domain.contains('.'));
    max_len(t, 200)?;
    pattern(t, ok, "[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}")
}
fn phone(t: &str) -> Result<(), String> {
    max_len(t, 50)
}
fn operator_name(t: &str) -> Result<(), String> {
    len_between(t, 1, 200)
}

use Kind::{Complex, Simple};

const GOODS_MEASURE: &[Particle] = &[
    el(
        COMMON,
        "percentageEstimationOrDeviation",
        0,
        1,
        Simple(percentage),
    ),
    el(COMMON, "netWeight", 0, 1, Simple(quantity)),
    el(COMMON, "supplementaryUnit", 0, 1, Simple(quantity)),
    el(
        COMMON,
        "supplementaryUnitQualifier",
        0,
        1,
        Simple(unit_qualifier),
    ),
];

const DESCRIPTORS: &[Particle] = &[
    el(
        COMMON,
        "descriptionOfGoods",
        1,
        1,
        Simple(description_of_goods),
    ),
    el(COMMON, "goodsMeasure", 1, 1, Complex(GOODS_MEASURE)),
];

const SPECIES: &[Particle] = &[
    el(DDS, "scientificName", 0, 1, Simple(species_name)),
    el(DDS, "commonName", 0, 1, Simple(species_name)),
];

const PRODUCER: &[Particle] = &[
    el(DDS, "position", 0, 1, Simple(long)),
    el(DDS, "country", 1, 1, Simple(country)),
    el(DDS, "name", 0, 1, Simple(producer_name)),
    el(DDS, "geometryGeojson", 1, 1, Simple(base64_binary)),
];

const COMMODITY: &[Particle] = &[
    el(DDS, "position", 0, 1, Simple(long)),
    el(DDS, "descriptors", 1, 1, Complex(DESCRIPTORS)),
    el(DDS, "hsHeading", 1, 1, Simple(hs_heading)),
    el(DDS, "speciesInfo", 0, 500, Complex(SPECIES)),
    el(DDS, "producers", 0, 1000, Complex(PRODUCER)),
];

const OPERATOR_REFERENCE: &[Particle] = &[
    el(COMMON, "identifierType", 1, 1, Simple(identifier_type)),
    el(COMMON, "identifierValue", 1, 1, Simple(identifier_value)),
];

const ADDRESS: &[Particle] = &[
    el(COMMON, "country", 1, 1, Simple(country)),
    el(COMMON, "street", 1, 1, Simple(street)),
    el(COMMON, "postalCode", 1, 1, Simple(postal_code)),
    el(COMMON, "city", 1, 1, Simple(city)),
    el(COMMON, "fullAddress", 0, 1, Simple(full_address)),
];

const OPERATOR: &[Particle] = &[
    el(
        COMMON,
        "operatorReferenceNumber",
        0,
        12,
        Complex(OPERATOR_REFERENCE),
    ),
    el(COMMON, "operatorAddress", 0, 1, Complex(ADDRESS)),
    el(COMMON, "operatorEmail", 0, 1, Simple(email)),
    el(COMMON, "operatorPhone", 0, 1, Simple(phone)),
    el(COMMON, "operatorName", 1, 1, Simple(operator_name)),
];

const GROUPED: &[Particle] = &[el(
    COMMON,
    "groupedDeclaration",
    1,
    1,
    Simple(reference_number),
)];

const STATEMENT: &[Particle] = &[
    el(
        DDS,
        "internalReferenceNumber",
        0,
        1,
        Simple(internal_reference),
    ),
    el(DDS, "activityType", 1, 1, Simple(activity_type)),
    el(DDS, "representedOperator", 0, 1, Complex(OPERATOR)),
    el(DDS, "countryOfActivity", 0, 1, Simple(european_country)),
    el(DDS, "borderCrossCountry", 0, 1, Simple(european_country)),
    el(DDS, "comment", 0, 1, Simple(comment)),
    el(DDS, "commodities", 1, 200, Complex(COMMODITY)),
    el(DDS, "geoLocationConfidential", 1, 1, Simple(boolean)),
    el(DDS, "groupedDeclarations", 0, 2000, Complex(GROUPED)),
];

const VERIFY_REQUEST: &[Particle] = &[
    el(VERIFY, "referenceNumber", 1, 1, Simple(reference_number)),
    el(
        VERIFY,
        "verificationNumber",
        1,
        1,
        Simple(verification_number),
    ),
];

const SUBMIT_REQUEST: &[Particle] = &[
    el(DDS, "operatorRole", 1, 1, Simple(operator_role)),
    el(DDS, "statement", 1, 1, Complex(STATEMENT)),
];

const AMEND_REQUEST: &[Particle] = &[
    el(DDS, "uuid", 1, 1, Simple(uuid)),
    el(DDS, "statement", 1, 1, Complex(STATEMENT)),
];

const WITHDRAW_REQUEST: &[Particle] = &[el(DDS, "uuid", 1, 1, Simple(uuid))];

const GET_REQUEST: &[Particle] = &[el(DDS, "uuidList", 1, 100, Simple(uuid))];

const GET_BY_REFERENCE_REQUEST: &[Particle] = &[el(
    DDS,
    "internalReference",
    1,
    1,
    Simple(internal_reference),
)];

/// The body element each operation takes, and its content model.
pub fn request_model(operation: &str) -> Option<(&'static str, &'static str)> {
    Some(match operation {
        "verifyDeclaration" => (VERIFY, "VerifyDeclarationRequest"),
        "submitDds" => (DDS, "SubmitDdsRequest"),
        "amendDds" => (DDS, "AmendDdsRequest"),
        "withdrawDds" => (DDS, "WithdrawDdsRequest"),
        "getDds" => (DDS, "GetDdsRequest"),
        "getDdsByInternalReference" => (DDS, "GetDdsByInternalReferenceRequest"),
        _ => return None,
    })
}

/// Checks the body element `payload` of `operation`.
pub fn check_request(operation: &str, payload: &Node) -> Result<(), String> {
    let (ns, name) = request_model(operation).ok_or_else(|| {
        format!(
            "cvc-elt.1.a: Cannot find the declaration of element '{}'.",
            payload.name
        )
    })?;
    if !payload.is(ns, name) {
        return Err(format!(
            "cvc-elt.1.a: Cannot find the declaration of element '{}'.",
            payload.qualified()
        ));
    }
    let model = match name {
        "VerifyDeclarationRequest" => VERIFY_REQUEST,
        "SubmitDdsRequest" => SUBMIT_REQUEST,
        "AmendDdsRequest" => AMEND_REQUEST,
        "WithdrawDdsRequest" => WITHDRAW_REQUEST,
        "GetDdsRequest" => GET_REQUEST,
        _ => GET_BY_REFERENCE_REQUEST,
    };
    check_complex(payload, model)
}

fn check_complex(node: &Node, model: &[Particle]) -> Result<(), String> {
    if !node.text.trim().is_empty() {
        return Err(format!(
            "cvc-complex-type.2.3: Element '{}' cannot have character [children], because the type's content type is element-only.",
            node.name
        ));
    }
    let mut children = node.children.iter().peekable();
    for particle in model {
        let mut count = 0;
        while count < particle.max
            && children
                .peek()
                .is_some_and(|c| c.is(particle.ns, particle.name))
        {
            if let Some(child) = children.next() {
                check_particle(child, particle)?;
            }
            count += 1;
        }
        if count < particle.min {
            return Err(match children.peek() {
                Some(next) => format!(
                    "cvc-complex-type.2.4.a: Invalid content was found starting with element '{}'. One of '{{\"{}\":{}}}' is expected.",
                    next.qualified(),
                    particle.ns,
                    particle.name
                ),
                None => format!(
                    "cvc-complex-type.2.4.b: The content of element '{}' is not complete. One of '{{\"{}\":{}}}' is expected.",
                    node.name, particle.ns, particle.name
                ),
            });
        }
    }
    if let Some(extra) = children.next() {
        return Err(format!(
            "cvc-complex-type.2.4.d: Invalid content was found starting with element '{}'. No child element is expected at this point.",
            extra.qualified()
        ));
    }
    Ok(())
}

fn check_particle(node: &Node, particle: &Particle) -> Result<(), String> {
    match &particle.kind {
        Kind::Simple(check) => {
            if let Some(child) = node.children.first() {
                return Err(format!(
                    "cvc-type.3.1.2: Element '{}' is a simple type, so it must have no element information item [children] ('{}').",
                    node.name,
                    child.qualified()
                ));
            }
            check(&node.text).map_err(|e| {
                format!(
                    "{e} cvc-type.3.1.3: The value of element '{}' is not valid.",
                    node.name
                )
            })
        }
        Kind::Complex(model) => check_complex(node, model),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_count_their_digits() {
        assert!(quantity("1250").is_ok());
        assert!(quantity("1250.123456").is_ok());
        assert!(quantity("1250.1234567").is_err());
        assert!(quantity("12345678901.123456").is_err());
        assert!(quantity("-1").is_err());
        assert!(quantity("1e3").is_err());
    }

    #[test]
    fn uuids_follow_the_pattern() {
        assert!(uuid("0190c6a8-7d2e-7b1c-9a4f-3e2d1c0b9a87").is_ok());
        assert!(uuid("0190c6a8-7d2e-7b1c-9a4f").is_err());
        assert!(uuid("zz90c6a8-7d2e-7b1c-9a4f-3e2d1c0b9a87").is_err());
    }
}
