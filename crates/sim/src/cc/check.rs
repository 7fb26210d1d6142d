//! Range checks for algorithm parameters, so a scenario asking for `beta = 1.5` fails when it is
//! loaded, naming the parameter, instead of producing a negative window minutes into a run.

/// `value` is a fraction strictly between 0 and 1 (a decrease factor or its complement).
pub fn fraction(name: &str, value: f64) -> Result<(), String> {
    if value > 0.0 && value < 1.0 {
        Ok(())
    } else {
        Err(format!(
            "{name} = {value} must lie strictly between 0 and 1"
        ))
    }
}

/// `value` is a finite number above 0.
pub fn positive(name: &str, value: f64) -> Result<(), String> {
    if value > 0.0 && value.is_finite() {
        Ok(())
    } else {
        Err(format!("{name} = {value} must be a positive number"))
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
    }
}
