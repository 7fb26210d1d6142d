//! Range checks for algorithm parameters, so a scenario asking for `beta = 1.5` fails when it is
//! loaded, naming the parameter, instead of producing a negative window minutes into a run.
//!
//! Every parameter has a range: fractions lie in (0, 1); other numbers are finite and at most
//! [`MAX_PARAMETER`], positive or, where zero means "off", non-negative; counts and times are
//! at least 1. Nothing sensible comes near the bound; a window grown from `a = 1e300` would.

/// The largest value any numeric parameter may take.
pub const MAX_PARAMETER: f64 = 1e6;

/// `value` is a fraction strictly between 0 and 1 (a decrease factor or its complement).
pub fn fraction(name: &str, value: f64) -> Result<(), String> {
    if value > 0.0 && value < 1.0 {
        Ok(())
    } else {
        Err(format!(
            "{name} = {} must lie strictly between 0 and 1",
            shown(value)
        ))
    }
}

/// `value` is a number in (0, [`MAX_PARAMETER`]].
pub fn positive(name: &str, value: f64) -> Result<(), String> {
    if value > 0.0 && value <= MAX_PARAMETER {
        Ok(())
    } else {
        Err(format!(
            "{name} = {} must be a positive number, at most {MAX_PARAMETER:e}",
            shown(value)
        ))
    }
}

/// `value` is a number in [0, [`MAX_PARAMETER`]].
pub fn non_negative(name: &str, value: f64) -> Result<(), String> {
    if (0.0..=MAX_PARAMETER).contains(&value) {
        Ok(())
    } else {
        Err(format!(
            "{name} = {} must be a number from 0 to {MAX_PARAMETER:e}",
            shown(value)
        ))
    }
}

/// `value` (a count or a time in ns) is at least 1.
pub fn at_least_one(name: &str, value: u64) -> Result<(), String> {
    if value >= 1 {
        Ok(())
    } else {
        Err(format!("{name} = {value} must be at least 1"))
    }
}

/// A value as a short number: `1e300`, not three hundred digits.
fn shown(value: f64) -> String {
    if value != 0.0 && !(1e-4..1e7).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_parameter_and_its_range() {
        assert_eq!(fraction("beta", 0.7), Ok(()));
        assert_eq!(
            fraction("beta", 1.0).unwrap_err(),
            "beta = 1 must lie strictly between 0 and 1"
        );
        assert!(fraction("b", f64::NAN).is_err());
        assert!(positive("a", 0.0).unwrap_err().starts_with("a = 0 "));
        assert!(positive("a", f64::INFINITY).is_err());
        assert!(positive("a", 1e300).unwrap_err().starts_with("a = 1e300 "));
        assert!(non_negative("alpha", -1.0).is_err());
        assert!(non_negative("alpha", f64::NAN).is_err());
        assert_eq!(non_negative("alpha", 0.0), Ok(()));
        assert!(at_least_one("rounds", 0)
            .unwrap_err()
            .starts_with("rounds = 0 "));
    }
}
